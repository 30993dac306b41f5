package load

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/model"
)

// checkIstio applies the checks of istiod's validation that the CRD
// schemas leave out but that make istiod reject an object, so it is left
// out as istiod would ignore it. ns is the object's namespace.
func checkIstio(m proto.Message, ns string) []fieldError {
	var c istioChecks
	spec := model.Path{}.Key("spec")
	switch x := m.(type) {
	case *networking.VirtualService:
		for i, r := range x.GetHttp() {
			at := spec.Key("http").Index(i)
			c.duration(r.GetTimeout(), at.Key("timeout"))
			c.duration(r.GetRetries().GetPerTryTimeout(), at.Key("retries").Key("perTryTimeout"))
			c.duration(r.GetRetries().GetBackoff(), at.Key("retries").Key("backoff"))
			if r.GetMirror() != nil && len(r.GetMirrors()) > 0 {
				c.add(at.Key("mirrors"), "a route with both mirror and mirrors is rejected by istiod's validation: use one of them")
			}
		}
	case *networking.DestinationRule:
		c.trafficPolicy(x.GetTrafficPolicy(), spec.Key("trafficPolicy"), ns)
		for i, s := range x.GetSubsets() {
			c.trafficPolicy(s.GetTrafficPolicy(), spec.Key("subsets").Index(i).Key("trafficPolicy"), ns)
		}
	}
	return c.errs
}

type istioChecks struct{ errs []fieldError }

func (c *istioChecks) add(p model.Path, msg string) {
	c.errs = append(c.errs, fieldError{Path: p, Msg: msg})
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

// trafficPolicy checks a DestinationRule traffic policy (top level or a
// subset's) and its port-level entries as istiod's validation does: the
// connection pool's durations and the client TLS credentialName.
func (c *istioChecks) trafficPolicy(tp *networking.TrafficPolicy, p model.Path, ns string) {
	if tp == nil {
		return
	}
	c.connectionPool(tp.GetConnectionPool(), p.Key("connectionPool"))
	c.credentialName(tp.GetTls(), p.Key("tls"), ns)
	for i, pl := range tp.GetPortLevelSettings() {
		at := p.Key("portLevelSettings").Index(i)
		c.connectionPool(pl.GetConnectionPool(), at.Key("connectionPool"))
		c.credentialName(pl.GetTls(), at.Key("tls"), ns)
	}
}

// connectionPool: every duration of a pool must pass istiod's rule,
// except a TCP idle timeout under a millisecond (0s turns it off); an
// HTTP/2 keepalive needs both its interval and its timeout.
func (c *istioChecks) connectionPool(cp *networking.ConnectionPoolSettings, p model.Path) {
	if h := cp.GetHttp(); h != nil {
		hp := p.Key("http")
		c.duration(h.GetIdleTimeout(), hp.Key("idleTimeout"))
		if ka := h.GetHttp2KeepAlive(); ka != nil {
			kp := hp.Key("http2KeepAlive")
			for _, f := range []struct {
				name string
				d    *durationpb.Duration
			}{{"interval", ka.GetInterval()}, {"timeout", ka.GetTimeout()}} {
				if f.d == nil {
					c.add(kp, "http2KeepAlive without "+f.name+" is rejected by istiod's validation: it needs both interval and timeout")
				}
				c.duration(f.d, kp.Key(f.name))
			}
		}
	}
	if t := cp.GetTcp(); t != nil {
		tp := p.Key("tcp")
		c.duration(t.GetConnectTimeout(), tp.Key("connectTimeout"))
		c.duration(t.GetMaxConnectionDuration(), tp.Key("maxConnectionDuration"))
		if d := t.GetIdleTimeout(); d != nil && d.AsDuration().Milliseconds() != 0 {
			c.duration(d, tp.Key("idleTimeout"))
		}
		c.duration(t.GetTcpKeepalive().GetTime(), tp.Key("tcpKeepalive").Key("time"))
		c.duration(t.GetTcpKeepalive().GetInterval(), tp.Key("tcpKeepalive").Key("interval"))
	}
}

// credentialName: a configmap:// credential names its namespace and
// name, and the namespace is the DestinationRule's own.
func (c *istioChecks) credentialName(tls *networking.ClientTLSSettings, p model.Path, ns string) {
	name, ok := strings.CutPrefix(tls.GetCredentialName(), "configmap://")
	if !ok {
		return
	}
	p = p.Key("credentialName")
	parts := strings.Split(name, "/")
	switch {
	case len(parts) < 2 || parts[0] == "" || parts[1] == "":
		c.add(p, fmt.Sprintf("credentialName %q is rejected by istiod's validation: configmap:// takes a namespace and a name, configmap://%s/NAME", tls.GetCredentialName(), ns))
	case parts[0] != ns:
		c.add(p, fmt.Sprintf("credentialName %q is rejected by istiod's validation: a configmap:// credential must be in the DestinationRule's namespace %q", tls.GetCredentialName(), ns))
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
