package diag

// registryEntries: MC3002 and up: the service registry, hosts, exportTo and ports.
var registryEntries = []*Entry{}
