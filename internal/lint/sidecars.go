package lint

import (
	"fmt"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// MC6003: a Sidecar egress host that imports no service. Judged only
// when the input holds services of the namespace the entry means (any
// namespace, for "*/"): a repository may keep a namespace's Services
// elsewhere, and then an entry naming them is no mistake we can see.
var egressHostMatchesNothing = &Analyzer{Entry: diag.EgressHostMatchesNothing, Run: func(p *Pass) {
	for _, e := range p.Mesh.EgressHosts() {
		if !e.Judged || e.Imported > 0 {
			continue
		}
		sc := &e.Sidecar.ObjectMeta
		raw := e.Sidecar.Spec.GetEgress()[e.Listener].GetHosts()[e.Index]
		where := "namespace " + e.Namespace
		if e.Namespace == "*" {
			where = "any namespace"
		}
		var why string
		var others []*resolve.Service
		switch {
		case len(e.Hidden) > 0:
			why, others = fmt.Sprintf("the services it names are not exported to namespace %s", sc.Namespace), e.Hidden
		case len(e.OffPort) > 0:
			why, others = fmt.Sprintf("the services it names lack the egress listener's port %d", e.Sidecar.Spec.GetEgress()[e.Listener].GetPort().GetNumber()), e.OffPort
		default:
			why = fmt.Sprintf("no Service or ServiceEntry in %s has a host matching %s", where, e.Host)
		}
		d := p.Report(sc, model.ParsePath(fmt.Sprintf("spec.egress[%d].hosts[%d]", e.Listener, e.Index)), diag.EgressHostImportsNothing,
			raw, objName(sc), why)
		for _, s := range others {
			d.Related = append(d.Related, related(s.Object, "named by the egress host but not imported"))
		}
	}
}}
