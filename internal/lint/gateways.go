package lint

// gatewayAnalyzers check Sidecars, workload selectors, listeners and gateways (MC6xxx, MC7xxx).
var gatewayAnalyzers = []*Analyzer{
	egressHostMatchesNothing,
	selectorMatchesNoWorkload,
	emptyWorkloadSelector,
	listenerConflict,
	catchAllTCPCapture,
	conflictingGateways,
	gatewayPortNotOnService,
	duplicateGatewayCertificate,
	gatewayCredentialNotFound,
}
