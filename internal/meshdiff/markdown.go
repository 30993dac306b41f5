package meshdiff

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/envdiff"
	"github.com/meshc/meshc/internal/resolve"
)

// CommentLimit is the most characters GitHub takes in a pull-request
// comment; the Markdown report stays under it.
const CommentLimit = 65536

// Caps on the Markdown picture, so it stays readable.
const (
	pictureGroups  = 8
	pictureHosts   = 6
	pictureChanges = 3
)

// writeMarkdown renders the report for a pull-request comment: a summary
// table, a Mermaid picture of the changed groups and hosts, then proxy
// groups, objects and findings in collapsible sections. Sections stop
// adding items when the comment would pass limit, and say how many they
// left out.
func (r *Report) writeMarkdown(w io.Writer, limit int) error {
	var b mdBuilder
	b.limit = limit
	s := r.Summary
	b.raw("## meshc diff\n\n")
	b.raw("| | |\n| --- | --- |\n")
	b.raw(fmt.Sprintf("| Proxies | %d compared, **%d changed**, %d added, %d removed |\n", s.Proxies.Compared, s.Proxies.Changed, s.Proxies.Added, s.Proxies.Removed))
	b.raw(fmt.Sprintf("| Objects | %d added, %d removed, %d modified |\n", s.Objects.Added, s.Objects.Removed, s.Objects.Modified))
	b.raw(fmt.Sprintf("| Findings | **%d new**, %d fixed, %d unchanged |\n", s.Findings.New, s.Findings.Fixed, s.Findings.Unchanged))
	if pic := r.mermaid(); pic != "" {
		b.raw("\n")
		b.item(pic)
	}
	if len(r.Proxies) > 0 {
		b.open(fmt.Sprintf("Proxy groups (%d)", len(r.Proxies)))
		for _, g := range r.Proxies {
			var it strings.Builder
			fmt.Fprintf(&it, "- %s **%s %s**: %s\n", mdMark(g.Status), g.Summary, g.Status, mdCode(listIDs(g.Proxies)))
			if len(g.Changes) > 0 {
				it.WriteString("  ```\n")
				for _, c := range g.Changes {
					where := c.Type + " " + c.Resource
					if c.Path != "" {
						where += " › " + c.Path
					}
					it.WriteString("  " + fence(envdiff.Line(c.Kind, where, cut(c.Old), cut(c.New))) + "\n")
				}
				it.WriteString("  ```\n")
			}
			for _, c := range g.Causes {
				fmt.Fprintf(&it, "  - because %s %s\n", mdMark(c.Status), mdText(c.String()))
			}
			b.item(it.String())
		}
		b.close("proxy groups")
	}
	if len(r.Objects) > 0 {
		b.open(fmt.Sprintf("Objects (%d)", len(r.Objects)))
		for _, o := range r.Objects {
			var it strings.Builder
			fmt.Fprintf(&it, "- %s %s %s %s\n", mdMark(o.Status), o.Status, mdText(o.Ref().String()), mdCode(o.Where()))
			for _, f := range o.Fields {
				fmt.Fprintf(&it, "  - %s\n", mdCode(envdiff.Line(f.Kind, f.Path, cut(f.Old), cut(f.New))))
			}
			b.item(it.String())
		}
		b.close("objects")
	}
	for _, part := range r.Diagnostics.parts() {
		b.open(fmt.Sprintf("%s (%d)", part.title, len(part.ds)))
		b.raw("| | code | object | message |\n| --- | --- | --- | --- |\n")
		for _, d := range part.ds {
			where := d.Object.String()
			if d.Object.File != "" {
				where += fmt.Sprintf(" (%s:%d)", d.Object.File, d.Object.Line)
			}
			b.item(fmt.Sprintf("| %s | %s %s | %s | %s |\n", d.Severity, d.Code, d.Name, cell(where), cell(d.Message)))
		}
		b.close(strings.ToLower(part.title))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdBuilder assembles a comment under a character limit: items that would
// pass it are left out and counted, and each section says how many.
type mdBuilder struct {
	strings.Builder
	limit   int
	omitted int
}

// reserve is what closing a section and its note may take.
const reserve = 512

func (b *mdBuilder) raw(s string) { b.WriteString(s) }

func (b *mdBuilder) open(title string) {
	b.omitted = 0
	b.raw("\n<details><summary>" + mdText(title) + "</summary>\n\n")
}

func (b *mdBuilder) item(s string) {
	if b.limit > 0 && b.Len()+len(s)+reserve > b.limit {
		b.omitted++
		return
	}
	b.raw(s)
}

func (b *mdBuilder) close(what string) {
	if b.omitted > 0 {
		b.raw(fmt.Sprintf("\n_%d more %s left out to keep the comment under %d characters; `meshc diff -o json` has them all._\n", b.omitted, what, b.limit))
	}
	b.raw("\n</details>\n")
}

func mdMark(status string) string {
	switch status {
	case StatusAdded:
		return "➕"
	case StatusRemoved:
		return "➖"
	}
	return "✏️"
}

// mdText escapes what Markdown or HTML would read as markup.
func mdText(s string) string {
	s = diag.Printable(s)
	r := strings.NewReplacer("\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]", "<", "&lt;", ">", "&gt;", "|", "\\|", "#", "\\#")
	return r.Replace(s)
}

// mdCode is s as inline code; backticks in s are dropped, as inline code
// cannot escape them.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(diag.Printable(s), "`", "'") + "`"
}

// fence is a line inside a fenced block: it cannot end the block.
func fence(s string) string {
	return strings.ReplaceAll(diag.Printable(s), "```", "'''")
}

// cell is text inside a table cell: one line, pipes escaped.
func cell(s string) string {
	return mdText(strings.ReplaceAll(s, "\n", " "))
}

// mermaid draws the changed groups and the hosts their changes touch,
// each edge labelled with the first changes (weights, subsets, resources
// added or removed), capped at a readable size; "" when no group changed.
func (r *Report) mermaid() string {
	var b strings.Builder
	groups, left := 0, 0
	hostIDs := map[string]string{}
	var hostNodes []string
	var edges []string
	for _, g := range r.Proxies {
		if g.Status != StatusChanged {
			continue
		}
		if groups == pictureGroups {
			left++
			continue
		}
		gid := fmt.Sprintf("g%d", groups)
		groups++
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", gid, mermaidText(g.Summary))
		hosts, labels := changedHosts(g.Changes)
		for i, h := range hosts {
			if i == pictureHosts {
				edges = append(edges, fmt.Sprintf("  %s -.- %s_more[\"%d more hosts\"]", gid, gid, len(hosts)-pictureHosts))
				break
			}
			id, ok := hostIDs[h]
			if !ok {
				id = fmt.Sprintf("h%d", len(hostIDs))
				hostIDs[h] = id
				hostNodes = append(hostNodes, fmt.Sprintf("  %s((\"%s\"))", id, mermaidText(h)))
			}
			edges = append(edges, fmt.Sprintf("  %s -- \"%s\" --> %s", gid, mermaidText(labels[h]), id))
		}
	}
	if groups == 0 {
		return ""
	}
	out := "```mermaid\nflowchart LR\n" + b.String()
	for _, n := range hostNodes {
		out += n + "\n"
	}
	for _, e := range edges {
		out += e + "\n"
	}
	out += "```\n"
	if left > 0 {
		out += fmt.Sprintf("\n_The picture shows the first %d changed groups; %d more are listed below._\n", pictureGroups, left)
	}
	return out
}

// changedHosts lists the hosts a group's changes touch, in order of first
// change, with a short label of the first changes of each.
func changedHosts(cs []Change) ([]string, map[string]string) {
	var hosts []string
	parts := map[string][]string{}
	for _, c := range cs {
		h, what := hostOf(c), shortChange(c)
		if h == "" {
			h = c.Type + " " + c.Resource
		}
		if _, ok := parts[h]; !ok {
			hosts = append(hosts, h)
			parts[h] = nil
		}
		switch {
		case slices.Contains(parts[h], what):
		case len(parts[h]) < pictureChanges:
			parts[h] = append(parts[h], what)
		case len(parts[h]) == pictureChanges:
			parts[h] = append(parts[h], "…")
		}
	}
	labels := map[string]string{}
	for h, ps := range parts {
		labels[h] = strings.Join(ps, ", ")
	}
	return hosts, labels
}

// hostOf is the service host a change is about: a cluster's or its
// endpoints', or a route change's virtual host; "" for anything else.
func hostOf(c Change) string {
	switch c.Type {
	case "cluster", "endpoints":
		if id, ok := resolve.ParseClusterID(c.Resource); ok {
			return string(id.Host)
		}
	case "route":
		vh, _, _ := strings.Cut(c.Path, " › ")
		if h, _, ok := strings.Cut(vh, ":"); ok {
			return h
		}
	}
	return ""
}

// shortChange is a change in a few words: "weight 90→80", "subset v2→v3",
// "+cluster".
func shortChange(c Change) string {
	switch c.Kind {
	case envdiff.Added:
		return "+" + c.Type
	case envdiff.Removed:
		return "-" + c.Type
	}
	last := c.Path
	if i := strings.LastIndexAny(last, ".› "); i >= 0 {
		last = last[i+1:]
	}
	oldID, ok1 := resolve.ParseClusterID(c.Old)
	newID, ok2 := resolve.ParseClusterID(c.New)
	if ok1 && ok2 && oldID.Host == newID.Host {
		return fmt.Sprintf("subset %s→%s", cmp.Or(oldID.Subset, "none"), cmp.Or(newID.Subset, "none"))
	}
	if len(c.Old) <= 12 && len(c.New) <= 12 && c.Old != "" && c.New != "" {
		return fmt.Sprintf("%s %s→%s", last, c.Old, c.New)
	}
	return "~" + last
}

// mermaidText is a label inside quotes: quotes and markup characters as
// Mermaid's entity codes.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "`", "'", "\n", " ").Replace(diag.Printable(s))
}
