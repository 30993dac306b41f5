package resolve

import (
	meshv1 "istio.io/api/mesh/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/meshc/meshc/internal/hierarchy"
)

// discovery returns whether istiod watches a namespace's Kubernetes
// resources under the mesh config's discoverySelectors, evaluated on the
// namespace's final labels (HNC's tree and managed labels included). No
// selectors means every namespace; istiod's own namespace is always
// watched. It also returns selectors that do not parse.
func discovery(mc *meshv1.MeshConfig, forest *hierarchy.Forest) (func(ns string) bool, []error) {
	var sels []labels.Selector
	var errs []error
	for _, s := range mc.GetDiscoverySelectors() {
		ls := &metav1.LabelSelector{MatchLabels: s.GetMatchLabels()}
		for _, e := range s.GetMatchExpressions() {
			ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{
				Key: e.GetKey(), Operator: metav1.LabelSelectorOperator(e.GetOperator()), Values: e.GetValues()})
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sels = append(sels, sel)
	}
	if len(mc.GetDiscoverySelectors()) == 0 {
		return func(string) bool { return true }, errs
	}
	root := mc.GetRootNamespace()
	return func(ns string) bool {
		if ns == root {
			return true
		}
		set := labels.Set(forest.Labels(ns))
		for _, s := range sels {
			if s.Matches(set) {
				return true
			}
		}
		return false
	}, errs
}
