package diag

// validationEntries: MC1008 and istiod's admission validation.
var validationEntries = []*Entry{AdmissionWarning}

// AdmissionWarning is what istiod's validating webhook admits but warns
// about; the rules that make it reject an object are SchemaViolation.
var AdmissionWarning = &Entry{
	Code: "MC1008", Name: "AdmissionWarning", Severity: Warning,
	Summary: "istiod's admission validation accepts the object but warns about it: a deprecated field, a setting it ignores, or a likely mistake.",
	Doc: `istiod's validating webhook returns warnings beside its verdict: kubectl
prints them when the object is applied, and the object is stored and used.
meshc checks the same rules from the manifest and keeps the object. Each
finding names the field and says what istiod does with it: a workload
selector without labels that applies to the whole namespace, a deprecated
field (mirrorPercent, outlierDetection.consecutiveErrors, consistentHash
minimumRingSize), certificates a passthrough server ignores, invalid or
duplicate cipher suites, a TLS minimum version below 1.2 without ciphers,
tls.httpsRedirect on a non-HTTP server, a duplicate Sidecar egress host,
a ServiceEntry TCP port without addresses where istiod allocates none, a
partial wildcard host, an IP as SNI host, a legacy "name.namespace"
gateway reference, a fault abort without error type, a large direct
response body, failover without outlier detection, a deprecated Envoy
filter name in an EnvoyFilter match, private keys in inline JWKS, or an
AuthorizationPolicy DENY rule with HTTP-only attributes, which denies all
TCP traffic. Fix the field, or suppress the code on the object if the
behaviour is intended.`,
	Istio: []string{"IST0133"},
}
