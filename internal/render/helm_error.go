package render

import (
	"regexp"
	"strconv"
)

// templateErrorRE finds the template and line in a template error as Helm
// reports it: "template: mesh/templates/dr.yaml:7:12: executing ...", from
// required and fail "execution error at (mesh/templates/dr.yaml:7:12)",
// and Helm 4's trace of an execution error, a line per template
// "mesh/templates/dr.yaml:7:12" each followed by what failed there.
var templateErrorRE = regexp.MustCompile(`(?m)(?:template: |at \(|^)([^\s:()]+):(\d+)`)

// templateErrorAt returns the file and line a template error names; no
// line for a template inside a subchart's archive.
func templateErrorAt(files chartFiles, err error) (string, int, bool) {
	m := templateErrorRE.FindAllStringSubmatch(err.Error(), -1)
	if m == nil {
		return "", 0, false
	}
	last := m[len(m)-1] // the innermost template, where the action failed
	line, _ := strconv.Atoi(last[2])
	file, own := files.file(last[1])
	if !own {
		line = 0
	}
	return file, line, true
}
