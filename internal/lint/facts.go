package lint

import (
	"slices"

	"github.com/meshc/meshc/internal/resolve"
)

// A fact is something several analyzers derive from the mesh, computed at
// most once per Run. Analyzers name the facts they read in Requires, as
// go/analysis analyzers name theirs, so a run of some analyzers computes
// only what they need and timing tells a fact's cost from an analyzer's.
type fact struct {
	name     string
	requires []*fact
	// compute makes the fact (or waits for the analyzer computing it).
	compute func(*shared)
}

var (
	factWorkloads     = &fact{name: "workloads", compute: func(s *shared) { s.workloads() }}
	factGateways      = &fact{name: "gateways", requires: []*fact{factWorkloads}, compute: func(s *shared) { s.gateways() }}
	factInWorkloads   = &fact{name: "input-workloads", requires: []*fact{factWorkloads}, compute: func(s *shared) { s.inWorkloads() }}
	factListeners     = &fact{name: "outbound-listeners", compute: func(s *shared) { s.listeners() }}
	factAnnotations   = &fact{name: "annotations", compute: func(s *shared) { s.annotations() }}
	factGatewayGroups = &fact{name: "gateway-groups", requires: []*fact{factGateways}, compute: func(s *shared) { s.gatewayGroups() }}
	factConfigHosts   = &fact{name: "config-hosts", compute: func(s *shared) { s.configHosts() }}
	factSelectors     = &fact{name: "selectors", compute: func(s *shared) { s.selectors() }}
	factWorkloadPorts = &fact{name: "workload-ports", compute: func(s *shared) { s.workloadPorts() }}
)

// requiredFacts lists the facts analyzers read, with the facts those
// read, each after what it requires.
func requiredFacts(analyzers []*Analyzer) []*fact {
	var out []*fact
	var visit func(f *fact)
	visit = func(f *fact) {
		if slices.Contains(out, f) {
			return
		}
		for _, r := range f.requires {
			visit(r)
		}
		out = append(out, f)
	}
	for _, a := range analyzers {
		for _, f := range a.Requires {
			visit(f)
		}
	}
	return out
}

// read notes that the pass's analyzer reads f; reading a fact its
// analyzer does not declare is reported to Options.undeclared (tests).
func (p *Pass) read(f *fact) {
	if p.undeclared != nil && !slices.Contains(p.declared, f) {
		p.undeclared(p.entry.Code, f.name)
	}
}

func (p *Pass) workloads() map[string][]inputWorkload {
	p.read(factWorkloads)
	return p.shared.workloads()
}

func (p *Pass) gateways() *gatewayInput {
	p.read(factGateways)
	return p.shared.gateways()
}

func (p *Pass) inWorkloads() *inputWorkloads {
	p.read(factInWorkloads)
	return p.shared.inWorkloads()
}

func (p *Pass) listeners() map[*resolve.Scope]outboundListeners {
	p.read(factListeners)
	return p.shared.listeners()
}

func (p *Pass) annotations() []istioAnnotation {
	p.read(factAnnotations)
	return p.shared.annotations()
}

func (p *Pass) gatewayGroups() []*gatewayGroup {
	p.read(factGatewayGroups)
	return p.shared.gatewayGroups()
}

func (p *Pass) configHosts() []configHost {
	p.read(factConfigHosts)
	return p.shared.configHosts()
}

func (p *Pass) selectors() []selector {
	p.read(factSelectors)
	return p.shared.selectors()
}

func (p *Pass) workloadPorts() workloadPortIndex {
	p.read(factWorkloadPorts)
	return p.shared.workloadPorts()
}
