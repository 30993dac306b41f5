package diag

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/owenrumney/go-sarif/v2/sarif"
)

// sarifRenderer writes a SARIF 2.1.0 log with one run. Every catalog entry
// is a rule, so code-scanning services know all codes, not just those that
// fired.
type sarifRenderer struct{ opts Options }

const toolURI = "https://github.com/meshc/meshc"

// fingerprintKey names the finding's key among a result's
// partialFingerprints, which code-scanning services use to match a
// result with the same finding of an earlier run.
const fingerprintKey = "meshcKey/v1"

func (r sarifRenderer) Render(w io.Writer, ds []Diagnostic) error {
	rep, err := sarif.New(sarif.Version210)
	if err != nil {
		return fmt.Errorf("sarif: %w", err)
	}
	run := sarif.NewRunWithInformationURI("meshc", toolURI)
	if r.opts.ToolVersion != "" {
		run.Tool.Driver.WithVersion(r.opts.ToolVersion)
	}
	for _, e := range Catalog() {
		run.AddRule(e.Code).
			WithName(e.Name).
			WithShortDescription(sarif.NewMultiformatMessageString(e.Summary)).
			WithFullDescription(sarif.NewMultiformatMessageString(unwrap(e.Doc))).
			WithHelpURI(e.HelpURI()).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevel(e.Severity)))
	}
	// Results must exist even when empty: code-scanning uploads require it.
	run.Results = []*sarif.Result{}
	for _, d := range sorted(ds) {
		res := run.CreateResultForRule(d.Code).
			WithLevel(sarifLevel(d.Severity)).
			WithMessage(sarif.NewTextMessage(d.Message)).
			WithPartialFingerPrints(map[string]any{fingerprintKey: d.Key})
		if loc := sarifLocation(d.Object); loc != nil {
			res.AddLocation(loc)
		}
		for i, rel := range d.Related {
			loc := sarifLocation(rel.ObjectRef)
			if loc == nil {
				continue
			}
			text := rel.ObjectRef.String()
			if rel.Note != "" {
				text = strings.TrimPrefix(text+": "+rel.Note, ": ")
			}
			if text != "" {
				loc.WithMessage(sarif.NewTextMessage(text))
			}
			res.AddRelatedLocation(loc.WithId(i + 1))
		}
		props := sarif.Properties{}
		if len(d.Proxies) > 0 {
			props["proxies"] = d.Proxies
		}
		if len(d.Environments) > 0 {
			props["environments"] = d.Environments
		}
		if len(props) > 0 {
			res.AttachPropertyBag(&sarif.PropertyBag{Properties: props})
		}
	}
	rep.AddRun(run)
	if err := rep.PrettyWrite(w); err != nil {
		return fmt.Errorf("write sarif: %w", err)
	}
	_, err = io.WriteString(w, "\n")
	return err
}

func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// sarifLocation places a result at its file and line, with the object as a
// logical location. Relative paths stay relative (code-scanning services
// resolve them against the repository root); absolute ones become file URIs.
func sarifLocation(o ObjectRef) *sarif.Location {
	if o.File == "" {
		return nil
	}
	phys := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(fileURI(o.File)))
	if o.Line > 0 {
		phys.WithRegion(sarif.NewRegion().WithStartLine(o.Line))
	}
	loc := sarif.NewLocationWithPhysicalLocation(phys)
	if o.Origin != "" {
		// What the line is, when not the line the object was written on.
		loc.WithMessage(sarif.NewTextMessage(o.Origin))
	}
	if o.Name != "" {
		fq := o.Kind + "/" + o.Name
		if o.Namespace != "" {
			fq = o.Kind + "/" + o.Namespace + "/" + o.Name
		}
		loc.AddLogicalLocations(sarif.NewLogicalLocation().WithName(o.Name).WithFullyQualifiedName(fq).WithKind("resource"))
	}
	return loc
}

func fileURI(path string) string {
	slashed := filepath.ToSlash(path)
	if filepath.IsAbs(path) {
		return (&url.URL{Scheme: "file", Path: slashed}).String()
	}
	return (&url.URL{Path: slashed}).String()
}
