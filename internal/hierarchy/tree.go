package hierarchy

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// TreeOptions configure WriteTree.
type TreeOptions struct {
	// Roots limits the output to these namespaces' subtrees; empty means
	// every namespace, like `kubectl hns tree -A`.
	Roots []string
	// HNSCompat hides namespaces whose parent is missing or unmanaged, as
	// kubectl-hns does; by default meshc lists them after the roots.
	HNSCompat bool
}

// WriteTree draws the forest in kubectl-hns's tree format
// (docs/semantics/hierarchy.md §4.1): one line per namespace, [s] before subnamespaces,
// condition footnotes, and the conditions listed at the end. Names and
// conditions are escaped for a terminal (diag.Printable).
func WriteTree(w io.Writer, f *Forest, opts TreeOptions) error {
	t := treeWriter{f: f, numbers: map[string]int{}}
	inCycle := func(n *Namespace) bool { return n.ownHalt == ReasonInCycle }
	var tops []*Namespace
	if len(opts.Roots) > 0 {
		for _, r := range opts.Roots {
			n := f.Namespaces[r]
			if n == nil || !n.Exists {
				return fmt.Errorf("namespace %q does not exist in the input", r)
			}
			tops = append(tops, n)
		}
	} else {
		var orphans []*Namespace
		projects := map[string][]string{}
		for _, n := range f.Sorted() {
			if !n.Exists || !n.Managed || (!n.Mentioned && len(n.Children) == 0) {
				continue
			}
			switch {
			case n.Project != "":
				if projects[n.Project] == nil {
					// An abstract node, drawn where its name sorts.
					tops = append(tops, &Namespace{Name: n.Project + " (TKE project)", Project: n.Project})
				}
				projects[n.Project] = append(projects[n.Project], n.Name)
			case n.Parent == "" || inCycle(n):
				tops = append(tops, n)
			case n.ownHalt == ReasonParentMissing || n.ownHalt == ReasonIllegalParent:
				if opts.HNSCompat {
					t.register(n) // hidden, but its conditions still count
				} else {
					orphans = append(orphans, n)
				}
			}
		}
		slices.SortStableFunc(tops, func(a, b *Namespace) int { return strings.Compare(a.Name, b.Name) })
		for _, n := range tops {
			if n.Project != "" && n.Parent == "" && !n.Exists {
				n.Children = projects[n.Project]
			}
		}
		tops = append(tops, orphans...)
	}
	for _, n := range tops {
		t.b.WriteString(diag.Printable(n.Name) + t.footnotes(n) + "\n")
		t.children(n, "", inCycle(n))
	}
	if t.sub {
		t.b.WriteString("\n[s] indicates subnamespaces\n")
	}
	if len(t.conds) > 0 {
		t.b.WriteString("\nConditions:\n")
		for i, c := range t.conds {
			diag.Fprintf(&t.b, "%d) %s\n", i+1, c)
		}
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

type treeWriter struct {
	f       *Forest
	b       strings.Builder
	numbers map[string]int
	conds   []string
	sub     bool
}

// register numbers a namespace's conditions in visiting order; identical
// texts share a number.
func (t *treeWriter) register(n *Namespace) []int {
	var nums []int
	for _, c := range n.Conditions {
		text := c.String()
		num, ok := t.numbers[text]
		if !ok {
			t.conds = append(t.conds, text)
			num = len(t.conds)
			t.numbers[text] = num
		}
		nums = append(nums, num)
	}
	slices.Sort(nums)
	return nums
}

func (t *treeWriter) footnotes(n *Namespace) string {
	nums := t.register(n)
	if len(nums) == 0 {
		return ""
	}
	parts := make([]string, len(nums))
	for i, x := range nums {
		parts[i] = strconv.Itoa(x)
	}
	return " (" + strings.Join(parts, ",") + ")"
}

// children draws n's children; below a cycle member, other cycle members
// are skipped but still count for the branch shapes.
func (t *treeWriter) children(n *Namespace, indent string, cycle bool) {
	for i, name := range n.Children {
		c := t.f.Namespaces[name]
		last := i == len(n.Children)-1
		if cycle && c.ownHalt == ReasonInCycle {
			continue
		}
		branch, next := "├── ", "│   "
		if last {
			branch, next = "└── ", "    "
		}
		mark := ""
		if c.Annotations[AnnotationSubOf] != "" {
			mark, t.sub = "[s] ", true
		}
		t.b.WriteString(indent + branch + mark + diag.Printable(c.Name) + t.footnotes(c) + "\n")
		t.children(c, indent+next, cycle || c.ownHalt == ReasonInCycle)
	}
}

// WriteCopies lists the propagated copies in objs per namespace, with the
// source each came from.
func WriteCopies(w io.Writer, objs []model.Object) error {
	var lines []string
	for _, o := range objs {
		m := o.Meta()
		if m.InheritedFrom == nil {
			continue
		}
		src := m.InheritedFrom
		// Escaped before joining: no tab or line break of the input's
		// can split a line.
		p := diag.Printable
		lines = append(lines, fmt.Sprintf("%s\t%s %s\t<- %s/%s (%s)", p(m.Namespace), p(m.Kind), p(m.Name), p(src.Namespace), p(src.Name), p(src.Ref().Location())))
	}
	slices.Sort(lines)
	var b strings.Builder
	b.WriteString("\nPropagated:\n")
	if len(lines) == 0 {
		b.WriteString("  nothing\n")
	}
	ns := ""
	for _, l := range lines {
		parts := strings.SplitN(l, "\t", 3)
		if parts[0] != ns {
			ns = parts[0]
			b.WriteString("  " + ns + "\n")
		}
		b.WriteString("    " + parts[1] + "  " + parts[2] + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
