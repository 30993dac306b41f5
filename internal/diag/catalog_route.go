package diag

// routeEntries: MC5003 and up: VirtualServices and routes.
var routeEntries = []*Entry{}
