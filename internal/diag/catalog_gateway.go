package diag

// gatewayEntries: MC6003 and up and MC7xxx: Sidecars, workload selectors, listeners and gateways.
var gatewayEntries = []*Entry{}
