package lint

// destinationRuleAnalyzers check DestinationRules (MC4xxx).
var destinationRuleAnalyzers = []*Analyzer{}
