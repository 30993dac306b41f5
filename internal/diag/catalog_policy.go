package diag

// policyEntries: MC9xxx: policies (security, telemetry, EnvoyFilter) and Istio metadata (annotations, labels).
var policyEntries = []*Entry{}
