package lint

// registryAnalyzers check the service registry, hosts, exportTo and ports (MC3xxx).
var registryAnalyzers = []*Analyzer{
	hiddenFromOwnNamespace,
	exportToUnknownNamespace,
	nonFQDNDottedHost,
	shortHostResolvesElsewhere,
	portNameWithoutProtocol,
	externalNamePortName,
	workloadPortProtocolConflict,
	workloadTargetPortConflict,
	serviceEntryProtocolConflict,
}
