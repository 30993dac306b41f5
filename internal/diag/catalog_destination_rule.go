package diag

// destinationRuleEntries: MC4004 and up: DestinationRules.
var destinationRuleEntries = []*Entry{}
