package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// gatewayInput is the input's Gateways, in input order, and workloads.
type gatewayInput struct {
	gateways []*model.Gateway
	ws       map[string][]inputWorkload
	services []*resolve.Service
}

func newGatewayInput(objs []model.Object, services []*resolve.Service, ws map[string][]inputWorkload) *gatewayInput {
	g := &gatewayInput{ws: ws, services: services}
	for _, o := range objs {
		if gw, ok := o.(*model.Gateway); ok {
			g.gateways = append(g.gateways, gw)
		}
	}
	return g
}

// selects says whether a Gateway applies to a workload, in any namespace
// (docs/semantics/virtual-services.md §6.7). Gateways apply to gateway
// workloads only, and one without selector labels to all of them: it is
// taken to apply to the workloads other Gateways' selectors name, not to
// every application Pod. A Gateway generated from a Gateway API Gateway
// applies to the workloads of the Services it names instead
// (docs/semantics/gateway-api.md §G2.6).
func (g *gatewayInput) selects(gw *model.Gateway, w inputWorkload) bool {
	if bound, ok := resolve.BoundServices(gw, g.services); ok {
		return slices.ContainsFunc(bound, func(s *resolve.Service) bool {
			return s.Namespace == w.obj.Namespace && len(s.Selector) > 0 && resolve.LabelsMatch(s.Selector, w.labels)
		})
	}
	if sel := gw.Spec.GetSelector(); len(sel) > 0 {
		return resolve.LabelsMatch(sel, w.labels)
	}
	return slices.ContainsFunc(g.gateways, func(o *model.Gateway) bool {
		sel := o.Spec.GetSelector()
		return len(sel) > 0 && resolve.LabelsMatch(sel, w.labels)
	})
}

// holdsGatewayWorkload says whether the input holds a gateway workload
// other than gw's own: one that looks like a gateway, or that another
// Gateway's selector names.
func (g *gatewayInput) holdsGatewayWorkload(gw *model.Gateway) bool {
	for _, ws := range g.ws {
		for _, w := range ws {
			if w.gateway || slices.ContainsFunc(g.gateways, func(o *model.Gateway) bool {
				sel := o.Spec.GetSelector()
				return o != gw && len(sel) > 0 && resolve.LabelsMatch(sel, w.labels)
			}) {
				return true
			}
		}
	}
	return false
}

// workloads are the input workloads a Gateway applies to, in namespace
// order.
func (g *gatewayInput) workloads(gw *model.Gateway) []inputWorkload {
	var out []inputWorkload
	for _, ns := range slices.Sorted(maps.Keys(g.ws)) {
		for _, w := range g.ws[ns] {
			if g.selects(gw, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

func inputWorkloadIDs(ws []inputWorkload) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, objName(w.obj))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MC7004: a Gateway server port that no Service in front of the gateway
// workloads exposes. As istioctl does, a server port matches a Service
// port's targetPort (the port the gateway listens on) or, when the
// Service maps it, the Service port itself. Judged only when some
// Service of the input selects the gateway workloads.
var gatewayPortNotOnService = &Analyzer{Entry: diag.GatewayPortNotOnService, Requires: []*fact{factGateways}, Run: func(p *Pass) {
	g := p.gateways()
	services := map[string][]*model.Service{}
	for _, o := range p.Mesh.Objects {
		if s, ok := o.(*model.Service); ok && len(s.Spec.Selector) > 0 {
			services[s.Namespace] = append(services[s.Namespace], s)
		}
	}
	for _, gw := range g.gateways {
		selected := g.workloads(gw)
		ports := map[uint32]bool{}
		var fronting []*model.Service
		for _, w := range selected {
			for _, s := range services[w.obj.Namespace] {
				if !resolve.LabelsMatch(s.Spec.Selector, w.labels) {
					continue
				}
				if !slices.Contains(fronting, s) {
					fronting = append(fronting, s)
				}
				for _, sp := range s.Spec.Ports {
					if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
						continue
					}
					ports[uint32(sp.Port)] = true
					if tp := sp.TargetPort.IntValue(); tp != 0 {
						ports[uint32(tp)] = true
					}
				}
			}
		}
		if len(fronting) == 0 {
			continue
		}
		var names []string
		for _, s := range fronting {
			names = append(names, objName(&s.ObjectMeta))
		}
		for i, srv := range gw.Spec.GetServers() {
			n := srv.GetPort().GetNumber()
			if n == 0 || ports[n] {
				continue
			}
			d := p.Report(&gw.ObjectMeta, model.ParsePath(fmt.Sprintf("spec.servers[%d].port.number", i)), diag.ServerPortNotExposed,
				i, objName(&gw.ObjectMeta), n, plural(len(selected), "workload", "workloads"), strings.Join(names, ", "))
			for _, s := range fronting {
				d.Related = append(d.Related, related(&s.ObjectMeta, "selects the gateway workloads"))
			}
			d.Proxies = inputWorkloadIDs(selected)
		}
	}
}}

// missingKeys says what a gateway credential lacks: a certificate and key
// (tls.crt and tls.key, or cert and key) and, for mutual TLS, a CA
// (ca.crt or cacert), which may also come from a "<name>-cacert" Secret.
func missingKeys(s *model.Secret, caSecret *model.Secret, mutual bool) string {
	has := func(s *model.Secret, keys ...string) bool {
		return s != nil && !slices.ContainsFunc(keys, func(k string) bool { _, ok := slices.BinarySearch(s.Keys, k); return !ok })
	}
	if !has(s, "tls.crt", "tls.key") && !has(s, "cert", "key") {
		return "a certificate and key (tls.crt and tls.key, or cert and key)"
	}
	if mutual && !has(s, "ca.crt") && !has(s, "cacert") && !has(caSecret, "ca.crt") && !has(caSecret, "cacert") {
		return fmt.Sprintf("a CA certificate for mutual TLS (ca.crt or cacert, in it or in a Secret %s-cacert)", s.Name)
	}
	return ""
}

// MC7006: a Gateway credentialName that names no Secret, or a Secret
// without what a TLS server needs. istiod's gateway reads credentials
// from its own workload's namespace. Judged only when the input carries
// Secrets (or objects that make them) in that namespace: many
// repositories keep Secrets elsewhere.
var gatewayCredentialNotFound = &Analyzer{Entry: diag.GatewayCredentialNotFound, Requires: []*fact{factGateways}, Run: func(p *Pass) {
	sources := model.SecretSources(p.Mesh.Objects)
	if len(sources) == 0 {
		return
	}
	carries := map[string]bool{}
	for _, c := range sources {
		carries[c.Object.Namespace] = true
	}
	g := p.gateways()
	for _, gw := range g.gateways {
		var nss []string
		for _, w := range g.workloads(gw) {
			if carries[w.obj.Namespace] && !slices.Contains(nss, w.obj.Namespace) {
				nss = append(nss, w.obj.Namespace)
			}
		}
		slices.Sort(nss)
		for i, srv := range gw.Spec.GetServers() {
			name := strings.TrimPrefix(srv.GetTls().GetCredentialName(), "kubernetes://")
			if name == "" || strings.Contains(name, "://") {
				continue // no credential, or one from another provider
			}
			mode := srv.GetTls().GetMode()
			mutual := mode == networking.ServerTLSSettings_MUTUAL || mode == networking.ServerTLSSettings_OPTIONAL_MUTUAL
			at := model.ParsePath(fmt.Sprintf("spec.servers[%d].tls.credentialName", i))
			var absent []string
			for _, ns := range nss {
				c, ok := sources[ns+"/"+name]
				switch {
				case !ok:
					absent = append(absent, ns)
				case c.Secret != nil:
					ca := sources[ns+"/"+name+"-cacert"].Secret
					if lacks := missingKeys(c.Secret, ca, mutual); lacks != "" {
						d := p.Report(&gw.ObjectMeta, at, diag.CredentialLacksKeys,
							i, objName(&gw.ObjectMeta), name, ns, lacks, keyList(c.Secret.Keys))
						d.Related = append(d.Related, related(c.Object, "the credential"))
					}
				}
			}
			if len(absent) > 0 {
				p.Report(&gw.ObjectMeta, at, diag.CredentialAbsent,
					i, objName(&gw.ObjectMeta), name, plural(len(absent), "namespace ", "namespaces ")+strings.Join(absent, ", "))
			}
		}
	}
}}

func keyList(keys []string) string {
	if len(keys) == 0 {
		return "no keys"
	}
	return list(keys, 8)
}
