package load

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"
	telemetry "istio.io/api/telemetry/v1alpha1"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// checkIstio applies the rules of istiod's admission validation that the
// CRD schemas leave out. A rule istiod rejects on is an error, and the
// object is left out as istiod would ignore it; a rule istiod only warns
// about is a fieldError with Warn set, and the object is kept. The rules
// follow istiod's pkg/config/validation, kind by kind; each kind's checks
// are in a validate_<kind>.go file.
func checkIstio(m proto.Message, meta model.ObjectMeta) []fieldError {
	c := istioChecks{ns: meta.Namespace}
	spec := model.Path{}.Key("spec")
	c.metadata(meta, m)
	switch x := m.(type) {
	case *networking.VirtualService:
		c.virtualService(x, spec)
	case *networking.DestinationRule:
		c.destinationRule(x, spec)
	case *networking.Gateway:
		c.gateway(x, spec, meta.Name)
	case *networking.ServiceEntry:
		c.serviceEntry(x, spec, meta.Labels)
	case *networking.Sidecar:
		c.sidecar(x, spec)
	case *networking.WorkloadEntry:
		c.workloadEntry(x, spec, nil, true)
	case *security.PeerAuthentication:
		c.peerAuthentication(x, spec)
	case *security.AuthorizationPolicy:
		c.authorizationPolicy(x, spec)
	case *networking.EnvoyFilter:
		c.envoyFilter(x, spec)
	case *telemetry.Telemetry:
		c.policyTarget(x.GetSelector(), x.GetTargetRef(), x.GetTargetRefs(), spec, "Telemetry")
		c.telemetry(x, spec)
	}
	return c.errs
}

// istioChecks collects one object's findings. ns is its namespace, which
// some rules compare with ("." in exportTo, configmap:// credentials).
type istioChecks struct {
	errs []fieldError
	ns   string
}

// add records a rule istiod rejects the object on.
func (c *istioChecks) add(p model.Path, msg string) {
	c.errs = append(c.errs, fieldError{Path: p, Msg: msg})
}

func (c *istioChecks) addf(p model.Path, format string, args ...any) {
	c.add(p, fmt.Sprintf(format, args...))
}

// warnf records a rule istiod admits the object with a warning on.
func (c *istioChecks) warnf(p model.Path, format string, args ...any) {
	c.errs = append(c.errs, fieldError{Path: p, Msg: fmt.Sprintf(format, args...), Warn: true})
}

// metadata: annotations istiod's webhook rejects on every Istio kind.
// istio.io/dry-run is AuthorizationPolicy's alone, and there only with
// ALLOW or DENY and a boolean value.
func (c *istioChecks) metadata(meta model.ObjectMeta, m proto.Message) {
	at := model.Path{}.Key("metadata").Key("annotations")
	for _, k := range []string{"istio.io/alwaysReject", "internal.istio.io/parent-namespace", "internal.istio.io/parent-names"} {
		if _, ok := meta.Annotations[k]; ok {
			c.addf(at.Key(k), "annotation %s is rejected by istiod's validation on objects users write: remove it", k)
		}
	}
	v, ok := meta.Annotations["istio.io/dry-run"]
	if !ok {
		return
	}
	ap, isAuthz := m.(*security.AuthorizationPolicy)
	switch {
	case !isAuthz:
		c.addf(at.Key("istio.io/dry-run"), "annotation istio.io/dry-run is rejected by istiod's validation on a %s: only AuthorizationPolicies take it; remove it", meta.Kind)
	case ap.GetAction() != security.AuthorizationPolicy_ALLOW && ap.GetAction() != security.AuthorizationPolicy_DENY:
		c.addf(at.Key("istio.io/dry-run"), "annotation istio.io/dry-run is rejected by istiod's validation with action %s: it works with ALLOW and DENY only", ap.GetAction())
	case !isBool(v):
		c.addf(at.Key("istio.io/dry-run"), "annotation istio.io/dry-run value %q is rejected by istiod's validation: it must be true or false", v)
	}
}

// isBool accepts what Go's strconv.ParseBool does, as istiod reads it.
func isBool(s string) bool {
	return slices.Contains([]string{"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"}, s)
}

// duration applies istiod's duration rule to a duration that is set.
func (c *istioChecks) duration(d *durationpb.Duration, p model.Path) {
	if d == nil {
		return
	}
	if msg := checkDuration(d.AsDuration()); msg != "" {
		c.add(p, msg)
	}
}

// checkDuration is istiod's duration rule: at least a millisecond, in
// whole milliseconds.
func checkDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "duration " + d.String() + " is rejected by istiod's validation: it must be at least 1ms"
	case d%time.Millisecond != 0:
		return "duration " + d.String() + " is rejected by istiod's validation: it must be whole milliseconds"
	}
	return ""
}

// port: a port number must be 1..65535.
func (c *istioChecks) port(n int64, p model.Path) {
	if n < 1 || n > 65535 {
		c.addf(p, "port %d is rejected by istiod's validation: a port number is 1..65535", n)
	}
}

// portName: Istio port names are DNS-1123 labels.
func (c *istioChecks) portName(name string, p model.Path) {
	if !isDNSLabel(name) {
		c.addf(p, "port name %q is rejected by istiod's validation: it must be a DNS label (letters, digits and '-', at most 63)", name)
	}
}

// protocolName: a declared protocol istiod does not know is refused.
func (c *istioChecks) protocolName(s string, p model.Path) {
	if s != "" && protocol.Parse(s) == protocol.Unsupported {
		c.unknownProtocol(s, p)
	}
}

func (c *istioChecks) unknownProtocol(s string, p model.Path) {
	c.addf(p, "protocol %q is rejected by istiod's validation: use one of HTTP, HTTPS, HTTP2, GRPC, GRPC-WEB, TCP, TLS, UDP, MONGO, MYSQL, REDIS", s)
}

// labels: selector and subset labels must be Kubernetes label keys and
// values. Keys are visited in order for a stable output.
func (c *istioChecks) labels(l map[string]string, p model.Path) {
	valid := true
	for k, v := range l {
		valid = valid && labelKeyProblem(k) == "" && validLabelValue(v)
	}
	if valid {
		return // the common case, without sorting
	}
	for _, k := range slices.Sorted(maps.Keys(l)) {
		if msg := labelKeyProblem(k); msg != "" {
			c.addf(p.Key(k), "label key %q is rejected by istiod's validation: %s", k, msg)
		}
		if v := l[k]; !validLabelValue(v) {
			c.addf(p.Key(k), "label value %q is rejected by istiod's validation: a value is at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", v)
		}
	}
}

// isQualifiedName: letters, digits, '-', '_' or '.', starting and ending
// with a letter or digit (a label key's name, a non-empty label value).
// Written out, as it runs on every label of every selector and subset.
func isQualifiedName(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if b := s[i]; !isAlnum(b) && b != '-' && b != '_' && b != '.' {
			return false
		}
	}
	return true
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func validLabelValue(v string) bool { return v == "" || isQualifiedName(v) }

// isSubdomain: DNS labels joined by dots.
func isSubdomain(s string) bool {
	for {
		label, rest, more := strings.Cut(s, ".")
		if !isDNSLabel(label) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

func labelKeyProblem(k string) string {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name = k
	}
	switch {
	case hasPrefix && (len(prefix) > 253 || !isSubdomain(prefix)):
		return "its prefix must be a DNS subdomain of at most 253 characters"
	case !isQualifiedName(name):
		return "a key is a name of letters, digits, '-', '_' or '.', starting and ending with a letter or digit, with an optional DNS prefix and '/'"
	case len(name) > 63:
		return "its name is longer than 63 characters"
	}
	return ""
}

// isDNSLabel is istiod's DNS-1123 label test (it accepts upper case). It
// runs on every host of every object, so it is written out rather than a
// regexp.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-') {
			return false
		}
	}
	return true
}

// isWildcardLabel: a DNS label, "*", or a label after a leading "*" or
// "*-" ("*foo", "*-foo").
func isWildcardLabel(s string) bool {
	if s == "*" {
		return true
	}
	if len(s) > 63 {
		return false
	}
	rest, _ := strings.CutPrefix(s, "*")
	if rest != s {
		rest = strings.TrimPrefix(rest, "-")
	}
	return isDNSLabel(rest)
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// ipOrCIDR: an address or a CIDR block.
func ipOrCIDR(s string) bool {
	if strings.Count(s, "/") == 1 {
		_, err := netip.ParsePrefix(s)
		return err == nil
	}
	return isIP(s)
}

// fqdnProblem is istiod's FQDN rule: at most 255 characters, DNS labels,
// a top-level label that is not all digits; a trailing dot is allowed.
func fqdnProblem(name string) string {
	if msg := domainLength(name); msg != "" {
		return msg
	}
	return dnsLabelsProblem(name)
}

func domainLength(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case len(name) > 255:
		return "it is longer than 255 characters"
	}
	return ""
}

func dnsLabelsProblem(name string) string {
	parts := strings.Split(name, ".")
	if tld := parts[len(parts)-1]; tld != "" && strings.Trim(tld, "0123456789") == "" {
		return fmt.Sprintf("its top-level label %q is all digits", tld)
	}
	for i, l := range parts {
		if i == len(parts)-1 && l == "" {
			break
		}
		if !isDNSLabel(l) {
			return fmt.Sprintf("label %q is not a DNS label", l)
		}
	}
	return ""
}

// wildcardDomainProblem is istiod's rule for hosts: a DNS name whose
// first label may be "*" or start with "*" ("*.example.com").
func wildcardDomainProblem(name string) string {
	if msg := domainLength(name); msg != "" {
		return msg
	}
	first, rest, more := strings.Cut(name, ".")
	if !isWildcardLabel(first) {
		return fmt.Sprintf("label %q is not a DNS label (a wildcard is allowed only as the first label's start)", first)
	}
	if more {
		return dnsLabelsProblem(rest)
	}
	return ""
}

// partialWildcard: a "*" anywhere but as a whole first label ("*.x").
func partialWildcard(name string) bool {
	return strings.Contains(name, "*") && name != "*" && !strings.HasPrefix(name, "*.")
}

// exportTo: istiod's rules for exportTo lists; "." stands for the
// object's own namespace, "~" (no one) is for ServiceEntries only.
func (c *istioChecks) exportTo(list []string, p model.Path, serviceEntry, drWithSelector bool) {
	if len(list) == 0 {
		return
	}
	p = p.Key("exportTo")
	seen := map[string]bool{}
	for i, e := range list {
		key := e
		if e == "." {
			key = c.ns
		}
		at := p.Index(i)
		switch {
		case seen[key] && key != e:
			c.addf(at, "exportTo lists both \".\" and its own namespace %q: istiod's validation rejects duplicates; keep one", c.ns)
			continue
		case seen[key]:
			c.addf(at, "exportTo lists %q twice: istiod's validation rejects duplicates; keep one", e)
			continue
		case e == "~" && !serviceEntry:
			c.addf(at, "exportTo \"~\" (no one) is rejected by istiod's validation here: only ServiceEntries take it")
			continue
		case key != "*" && key != "~" && !isDNSLabel(key):
			c.addf(at, "exportTo %q is rejected by istiod's validation: use \".\", \"*\" or a namespace name", e)
			continue
		}
		seen[key] = true
	}
	if drWithSelector && len(seen) > 0 {
		if !seen[c.ns] {
			c.addf(p, "a DestinationRule with a workloadSelector exported beyond its namespace is rejected by istiod's validation: export it to \".\" only")
		} else if len(seen) > 1 {
			c.addf(p, "a DestinationRule with a workloadSelector exported to several namespaces is rejected by istiod's validation: export it to \".\" only")
		}
	}
	if seen["*"] && len(list) > 1 {
		c.addf(p, "exportTo mixes \"*\" (everyone) with other entries: istiod's validation rejects it; keep \"*\" alone or list namespaces")
	}
	if seen["~"] && len(list) > 1 {
		c.addf(p, "exportTo mixes \"~\" (no one) with other entries: istiod's validation rejects it; keep \"~\" alone or list namespaces")
	}
}

// workloadSelector: a selector's labels may not be empty keys or contain
// "*"; a selector without labels is admitted with a warning (it selects
// every workload of the namespace). what names the kind for the warning.
func (c *istioChecks) workloadSelector(l map[string]string, set bool, p model.Path, what string) {
	if !set {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(l)) {
		v := l[k]
		switch {
		case k == "":
			c.addf(p.Key(k), "an empty label key in a selector is rejected by istiod's validation")
		case strings.Contains(k, "*") || strings.Contains(v, "*"):
			c.addf(p.Key(k), "wildcard in selector label %s=%s is rejected by istiod's validation: selectors match exact labels", k, v)
		}
	}
	if len(l) == 0 {
		c.warnf(p, "%s has a workload selector without labels: istiod warns and applies it to every workload of namespace %s; add labels or remove the selector", what, c.ns)
	}
}
