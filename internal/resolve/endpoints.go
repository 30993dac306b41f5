package resolve

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/model"
)

// Endpoint is one workload instance behind a service port.
type Endpoint struct {
	// Address is an IP, a hostname (DNS ServiceEntries) or a unix://
	// path; empty for a workload template, whose pod IPs the manifests do
	// not know.
	Address string
	// Extra are a dual-stack pod's other addresses, which the endpoint
	// also answers on (Options.DualStack).
	Extra []string
	// Port is the workload port; ServicePort the service port it serves,
	// and PortName that port's name, which tells apart two ports of one
	// number (UDP and TCP 53).
	Port, ServicePort uint32
	PortName          string
	Labels            map[string]string
	// TLSMode is "istio" when the workload has a sidecar (or says so),
	// else "disabled".
	TLSMode        string
	ServiceAccount string
	Weight         uint32
	Locality       string
	// Workload is the Pod, workload template or WorkloadEntry.
	Workload *model.ObjectMeta
}

// workload is a candidate endpoint source: a pod, a workload template or a
// WorkloadEntry.
type workload struct {
	meta     *model.ObjectMeta
	labels   map[string]string
	addrs    []string
	spec     *corev1.PodSpec
	sa       string
	tlsMode  string
	ports    map[string]uint32 // WorkloadEntry named ports
	weight   uint32
	locality string
	entry    bool // a WorkloadEntry
}

// nsWorkloads are the endpoint sources of one namespace, by kind and name
// (never in input order), indexed by label so that selecting scans only workloads that carry one
// of the selector's labels.
type nsWorkloads struct {
	all     []workload
	byLabel map[[2]string][]int32 // label key and value → positions in all
}

// selecting calls f with each workload whose labels include selector's,
// in order; an empty selector selects every workload.
func (ws *nsWorkloads) selecting(selector map[string]string, f func(w *workload)) {
	if ws == nil {
		return
	}
	if len(selector) == 0 {
		for i := range ws.all {
			f(&ws.all[i])
		}
		return
	}
	var narrow []int32
	for k, v := range selector {
		c, ok := ws.byLabel[[2]string{k, v}]
		if !ok {
			return
		}
		if narrow == nil || len(c) < len(narrow) {
			narrow = c
		}
	}
	for _, i := range narrow {
		// narrow holds the workloads with a label of the selector: all
		// of a selector of one label.
		if w := &ws.all[i]; len(selector) == 1 || LabelsMatch(selector, w.labels) {
			f(w)
		}
	}
}

// workloads collects endpoint sources by namespace. The TLS mode of a pod
// or template without the tlsMode label is left empty: it depends on the
// sidecar (setInjected).
func workloads(objs []model.Object) map[string]*nsWorkloads {
	out := map[string][]workload{}
	tls := func(labels map[string]string) string { return labels["security.istio.io/tlsMode"] }
	for _, o := range objs {
		switch x := o.(type) {
		case *model.Pod:
			spec := &x.Spec
			// A Pod the manifests give no IP is still selected, as a
			// template is: it serves the ports (a gateway's server ports
			// map through them), with an endpoint of no address.
			addrs := x.IPs
			if len(addrs) == 0 {
				addrs = []string{""}
			}
			out[x.Namespace] = append(out[x.Namespace], workload{meta: &x.ObjectMeta, labels: x.Labels, addrs: addrs, spec: spec,
				sa: cmp.Or(spec.ServiceAccountName, "default"), tlsMode: tls(x.Labels)})
		case *model.Workload:
			spec := &x.Template.Spec
			out[x.Namespace] = append(out[x.Namespace], workload{meta: &x.ObjectMeta, labels: x.Template.Labels, addrs: []string{""}, spec: spec,
				sa: cmp.Or(spec.ServiceAccountName, "default"), tlsMode: tls(x.Template.Labels)})
		case *model.WorkloadEntry:
			labels := map[string]string{}
			for k, v := range x.Spec.GetLabels() {
				labels[k] = v
			}
			for k, v := range x.Labels {
				labels[k] = v // metadata labels win
			}
			mode := labels["security.istio.io/tlsMode"]
			switch {
			case mode != "":
			case x.Spec.GetServiceAccount() != "":
				mode = "istio"
			default:
				mode = "disabled"
			}
			out[x.Namespace] = append(out[x.Namespace], workload{meta: &x.ObjectMeta, labels: labels, addrs: []string{x.Spec.GetAddress()},
				sa: x.Spec.GetServiceAccount(), tlsMode: mode, ports: x.Spec.GetPorts(), weight: x.Spec.GetWeight(), locality: x.Spec.GetLocality(), entry: true})
		}
	}
	indexed := make(map[string]*nsWorkloads, len(out))
	for ns, all := range out {
		slices.SortStableFunc(all, func(a, b workload) int {
			return cmp.Or(cmp.Compare(a.meta.Kind, b.meta.Kind), cmp.Compare(a.meta.Name, b.meta.Name))
		})
		ws := &nsWorkloads{all: all, byLabel: map[[2]string][]int32{}}
		for i, w := range all {
			for k, v := range w.labels {
				ws.byLabel[[2]string{k, v}] = append(ws.byLabel[[2]string{k, v}], int32(i))
			}
		}
		indexed[ns] = ws
	}
	return indexed
}

// setInjected sets the TLS mode the tlsMode label does not give: "istio"
// for a workload injected says gets a sidecar, else "disabled".
func setInjected(ws map[string]*nsWorkloads, injected func(*model.ObjectMeta) bool) {
	for _, w := range ws {
		for i := range w.all {
			if w := &w.all[i]; w.tlsMode == "" {
				w.tlsMode = "disabled"
				if injected(w.meta) {
					w.tlsMode = "istio"
				}
			}
		}
	}
}

// kubeEndpoints are the pods, templates and WorkloadEntries of the
// service's namespace its selector matches, per port (docs/semantics/registry.md §1.5).
//
// A pod's addresses are those of the families the service's EndpointSlices
// list (Service.families). With dualStack, a pod with several addresses
// behind a Service with cluster IPs of both families is one endpoint on
// its first address with the others extra (addressSets).
func kubeEndpoints(s *Service, ws *nsWorkloads, dualStack bool) []Endpoint {
	if len(s.Selector) == 0 {
		return nil // an empty selector selects nothing automatically
	}
	var out []Endpoint
	ws.selecting(s.Selector, func(w *workload) {
		addrs := slices.DeleteFunc(slices.Clone(w.addrs), func(a string) bool { return !s.listsFamilyOf(a) })
		sets := w.addressSets(addrs, dualStack && s.Resolution == ClientSideLB && len(s.Addresses) > 1)
		for _, p := range s.Ports {
			target, ok := targetPort(p, *w)
			if !ok {
				continue
			}
			for _, set := range sets {
				out = append(out, Endpoint{Address: set[0], Extra: set[1:], Port: target, ServicePort: p.Number, PortName: p.Name, Labels: w.labels, TLSMode: w.tlsMode,
					ServiceAccount: w.sa, Weight: w.weight, Locality: w.locality, Workload: w.meta})
			}
		}
	})
	return out
}

// addressSets groups a workload's addresses into endpoints, each its
// address and extra ones: one each, or with merge all of a pod's in one,
// as istiod joins a dual-stack pod's under ISTIO_DUAL_STACK.
func (w *workload) addressSets(addrs []string, merge bool) [][]string {
	if merge && w.meta.Kind == "Pod" && len(addrs) > 1 {
		return [][]string{addrs}
	}
	out := make([][]string, len(addrs))
	for i, a := range addrs {
		out[i] = []string{a}
	}
	return out
}

// targetPort resolves a service port's target on one workload: a number,
// or a container port with that name and the same protocol.
func targetPort(p Port, w workload) (uint32, bool) {
	switch {
	case p.TargetPortName != "" && w.entry:
		if n := w.ports[p.TargetPortName]; n > 0 {
			return n, true
		}
		return 0, false
	case p.TargetPortName != "":
		for _, cs := range [][]corev1.Container{w.spec.Containers, w.spec.InitContainers} {
			for _, c := range cs {
				for _, cp := range c.Ports {
					if cp.Name == p.TargetPortName && strings.EqualFold(string(cmp.Or(cp.Protocol, corev1.ProtocolTCP)), protocolOf(p)) {
						return uint32(cp.ContainerPort), true
					}
				}
			}
		}
		return 0, false
	case w.entry && w.ports[p.Name] > 0:
		return w.ports[p.Name], true
	case p.TargetPort > 0:
		return p.TargetPort, true
	}
	return p.Number, true
}

func protocolOf(p Port) string {
	if p.Protocol == "UDP" {
		return "UDP"
	}
	return "TCP"
}

// entryEndpoints are a ServiceEntry's endpoints (docs/semantics/registry.md §1.3).
//
// A selected pod is one endpoint on its first address; with dualStack,
// with its other addresses extra (addressSets).
func entryEndpoints(s *Service, ws *nsWorkloads, dualStack bool) []Endpoint {
	spec := s.entry.Spec
	dns := s.Resolution == DNSLB || s.Resolution == DNSRoundRobinLB
	var out []Endpoint
	port := func(p Port, addr string, named map[string]uint32) uint32 {
		switch {
		case strings.HasPrefix(addr, "unix://"):
			return 0
		case named[p.Name] > 0:
			return named[p.Name]
		case p.TargetPort > 0:
			return p.TargetPort
		}
		return p.Number
	}
	switch {
	case spec.GetWorkloadSelector() != nil:
		ws.selecting(spec.GetWorkloadSelector().GetLabels(), func(w *workload) {
			addrs := w.addrs
			if !dualStack && w.meta.Kind == "Pod" {
				addrs = addrs[:1] // istiod knows a pod by status.podIP here
			}
			for _, set := range w.addressSets(addrs, dualStack) {
				a := set[0]
				if w.entry && !dns && (strings.HasPrefix(a, "unix://") || !looksLikeIP(a)) {
					continue // hostnames and sockets serve DNS entries only
				}
				for _, p := range s.Ports {
					out = append(out, Endpoint{Address: a, Extra: set[1:], Port: port(p, a, w.ports), ServicePort: p.Number, PortName: p.Name, Labels: w.labels, TLSMode: w.tlsMode,
						ServiceAccount: w.sa, Weight: w.weight, Locality: w.locality, Workload: w.meta})
				}
			}
		})
	case len(spec.GetEndpoints()) > 0:
		for i, e := range spec.GetEndpoints() {
			// istiod names an inline endpoint after its entry and index.
			w := *s.Object
			w.Name += "-" + strconv.Itoa(i)
			for _, p := range s.Ports {
				out = append(out, entryEndpoint(&w, e, p, port(p, e.GetAddress(), e.GetPorts())))
			}
		}
	case dns:
		for _, p := range s.Ports {
			out = append(out, Endpoint{Address: string(s.Host), Port: port(p, "", nil), ServicePort: p.Number, PortName: p.Name, TLSMode: "disabled", Workload: s.Object})
		}
	}
	return out
}

func entryEndpoint(w *model.ObjectMeta, e *networking.WorkloadEntry, p Port, port uint32) Endpoint {
	mode := e.GetLabels()["security.istio.io/tlsMode"]
	if mode == "" {
		mode = "disabled"
		if e.GetServiceAccount() != "" {
			mode = "istio"
		}
	}
	return Endpoint{Address: e.GetAddress(), Port: port, ServicePort: p.Number, PortName: p.Name, Labels: e.GetLabels(), TLSMode: mode,
		ServiceAccount: e.GetServiceAccount(), Weight: e.GetWeight(), Locality: e.GetLocality(), Workload: w}
}

func looksLikeIP(a string) bool {
	return strings.Count(a, ".") == 3 && strings.Trim(a, "0123456789.") == "" || strings.Contains(a, ":")
}

// endpointJobs are n jobs and one that together fill every service's
// endpoints, in endpoint order (sortEndpoints), each job writing its own
// services': the Kubernetes services, in n parts, and the ServiceEntries,
// whose services for one (namespace, host) share theirs, oldest first, as
// istiod concatenates them, which decides the one endpoint per port a
// DNS_ROUND_ROBIN entry keeps.
func endpointJobs(services []*Service, ws map[string]*nsWorkloads, dualStack bool, n int) []func() {
	var kube, entries []*Service
	for _, s := range services {
		switch s.Registry {
		case Kubernetes:
			kube = append(kube, s)
		case External:
			entries = append(entries, s)
		}
	}
	jobs := []func(){func() { assignEntryEndpoints(entries, ws, dualStack) }}
	for part := range slices.Chunk(kube, max(1, (len(kube)+n-1)/n)) {
		jobs = append(jobs, func() {
			for _, s := range part {
				s.Endpoints = sortEndpoints(kubeEndpoints(s, ws[s.Namespace], dualStack))
			}
		})
	}
	return jobs
}

// assignEntryEndpoints fills the endpoints of ServiceEntries' services,
// oldest first (endpointJobs).
func assignEntryEndpoints(entries []*Service, ws map[string]*nsWorkloads, dualStack bool) {
	type key struct{ ns, host string }
	shared := map[key][]Endpoint{}
	for _, s := range entries {
		k := key{s.Namespace, string(s.Host)}
		shared[k] = append(shared[k], entryEndpoints(s, ws[s.Namespace], dualStack)...)
	}
	sorted := map[key][]Endpoint{}
	for _, s := range entries {
		k := key{s.Namespace, string(s.Host)}
		if s.Resolution == DNSRoundRobinLB {
			s.Endpoints = sortEndpoints(firstPerPort(shared[k]))
			continue
		}
		if _, ok := sorted[k]; !ok {
			sorted[k] = sortEndpoints(shared[k])
		}
		s.Endpoints = sorted[k]
	}
}

// sortEndpoints returns eps ordered by address (IPs in numeric order,
// IPv4 first, then in string order none, hostnames and socket paths),
// port, and the workload's kind, namespace and name. istiod's order follows informer
// events and is no contract; meshc's is, so that the order of the input
// never shows in Envoy's load assignments or anywhere else. Each address
// is parsed once.
func sortEndpoints(eps []Endpoint) []Endpoint {
	type keyed struct {
		ip netip.Addr // invalid for a hostname, a socket path or none
		e  *Endpoint
	}
	ks := make([]keyed, len(eps))
	for i := range eps {
		var ip netip.Addr
		if a := eps[i].Address; a != "" { // a template's: no address, and no error to make
			ip, _ = netip.ParseAddr(a)
		}
		ks[i] = keyed{ip, &eps[i]}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		c := 0
		switch {
		case a.ip.IsValid() && b.ip.IsValid():
			c = a.ip.Compare(b.ip)
		case a.ip.IsValid():
			c = -1
		case b.ip.IsValid():
			c = 1
		default:
			c = strings.Compare(a.e.Address, b.e.Address)
		}
		return cmp.Or(c, cmp.Compare(a.e.Port, b.e.Port), compareWorkloads(a.e.Workload, b.e.Workload))
	})
	out := make([]Endpoint, len(ks))
	for i, k := range ks {
		out[i] = *k.e
	}
	return out
}

// compareWorkloads orders workloads by kind, namespace and name, none
// first.
func compareWorkloads(a, b *model.ObjectMeta) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

func firstPerPort(eps []Endpoint) []Endpoint {
	var out []Endpoint
	for _, e := range eps {
		if !slices.ContainsFunc(out, func(o Endpoint) bool { return o.ServicePort == e.ServicePort }) {
			out = append(out, e)
		}
	}
	return out
}

// ProxyPort is the workload port on which proxy px serves service port p,
// as its endpoint would have it; ok is false when p names a target port
// px's containers do not declare.
func ProxyPort(p Port, px *Proxy) (uint32, bool) {
	return targetPort(p, workload{spec: &corev1.PodSpec{Containers: []corev1.Container{{Ports: px.ContainerPorts}}}})
}
