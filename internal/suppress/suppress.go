// Package suppress decides which findings a user asked not to see: rules
// from flags or .meshc.yaml (a code, optionally for subjects matching a
// namespace/name glob, with a reason and an expiry date) and annotations
// on the subject objects. It applies to every code, whichever pass reports
// it.
package suppress

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// Annotation on an object lists meshc codes not to report about it.
const Annotation = "meshc.io/suppress"

// IstioAnnotation is istioctl analyze's; it is honoured for the meshc codes
// that report what the listed Istio codes report.
const IstioAnnotation = "galley.istio.io/analyze-suppress"

// Rule suppresses one code, or an Istio code's meshc equivalents.
type Rule struct {
	// Code is as written: MC4001, ShadowedDestinationRule or IST0101.
	Code string
	// Object, when set, is a path.Match glob on the subject's
	// "namespace/name".
	Object string
	// Reason says why; .meshc.yaml requires one.
	Reason string
	// Expires, when set, is the first day the rule no longer applies.
	Expires time.Time
	// Source is where the rule was written (a .meshc.yaml line), for
	// reports about it; zero for flags.
	Source diag.ObjectRef
}

// Parse reads a --suppress value: CODE or CODE=namespace/name.
func Parse(s string) (Rule, error) {
	code, glob, scoped := strings.Cut(s, "=")
	r := Rule{Code: strings.TrimSpace(code)}
	if scoped {
		r.Object = glob
	}
	return r, r.Check()
}

// Check reports a rule whose code no catalog entry answers to, or whose
// glob is malformed.
func (r Rule) Check() error {
	if len(r.entries()) == 0 {
		return fmt.Errorf("unknown diagnostic code %q (meshc lint --explain CODE documents a code; docs/diagnostics.md lists them)", r.Code)
	}
	if r.Object != "" {
		if _, err := path.Match(r.Object, ""); err != nil || !strings.Contains(r.Object, "/") {
			return fmt.Errorf("suppression of %s: object %q is not a namespace/name glob", r.Code, r.Object)
		}
	}
	return nil
}

// entries are the catalog entries r suppresses.
func (r Rule) entries() []*diag.Entry {
	if e, ok := diag.Lookup(r.Code); ok {
		return []*diag.Entry{e}
	}
	return diag.ByIstioCode(r.Code)
}

// Set is rules ready to apply to one input.
type Set struct {
	rules []active
	// annotated are the codes each subject's annotations suppress.
	annotated map[string]map[string]bool
}

type active struct {
	codes  []string
	object string
}

// New prepares rules and the annotations of objs. Rules expired on now do
// not apply; each is reported (ExpiredSuppression) where it was written.
func New(rules []Rule, objs []model.Object, now time.Time) (*Set, []diag.Diagnostic) {
	s := &Set{annotated: annotations(objs)}
	var expired []diag.Diagnostic
	today := now.Truncate(24 * time.Hour)
	for _, r := range rules {
		if !r.Expires.IsZero() && !today.Before(r.Expires) {
			expired = append(expired, diag.SuppressionExpired.At(r.Source,
				r.Code+forObject(r.Object), r.Expires.Format(time.DateOnly), r.Reason))
			continue
		}
		a := active{object: r.Object}
		for _, e := range r.entries() {
			a.codes = append(a.codes, e.Code)
		}
		s.rules = append(s.rules, a)
	}
	return s, expired
}

func forObject(glob string) string {
	if glob == "" {
		return ""
	}
	return " for " + glob
}

// Filter returns ds without the suppressed findings; ds is not modified.
func (s *Set) Filter(ds []diag.Diagnostic) []diag.Diagnostic {
	if len(s.rules) == 0 && len(s.annotated) == 0 {
		return ds
	}
	return slices.DeleteFunc(slices.Clone(ds), s.suppressed)
}

func (s *Set) suppressed(d diag.Diagnostic) bool {
	if s.annotated[subjectKey(d.Object)][d.Code] {
		return true
	}
	for _, r := range s.rules {
		if !slices.Contains(r.codes, d.Code) {
			continue
		}
		if r.object == "" {
			return true
		}
		if ok, _ := path.Match(r.object, d.Object.Namespace+"/"+d.Object.Name); ok {
			return true
		}
	}
	return false
}

func subjectKey(o diag.ObjectRef) string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

// annotations collects the codes objects' annotations suppress, by subject.
func annotations(objs []model.Object) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, o := range objs {
		m := o.Meta()
		own, istio := m.Annotations[Annotation], m.Annotations[IstioAnnotation]
		if own == "" && istio == "" {
			continue // the common case: nothing to suppress
		}
		codes := map[string]bool{}
		for _, c := range strings.Split(own+","+istio, ",") {
			for _, e := range (Rule{Code: strings.TrimSpace(c)}).entries() {
				codes[e.Code] = true
			}
		}
		if len(codes) > 0 {
			out[subjectKey(m.Ref())] = codes
		}
	}
	return out
}
