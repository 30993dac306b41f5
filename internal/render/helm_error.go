package render

import (
	"io/fs"
	"regexp"
	"strconv"
)

// templateErrorRE finds the template and line in a template error as Helm
// reports it: "template: mesh/templates/dr.yaml:7:12: executing ..." or,
// from required and fail, "execution error at (mesh/templates/dr.yaml:7:12)".
var templateErrorRE = regexp.MustCompile(`(?:template: |at \()([^\s:()]+):(\d+)`)

// templateErrorAt returns the file and line a template error names.
func templateErrorAt(fsys fs.FS, dir string, err error) (string, int, bool) {
	m := templateErrorRE.FindAllStringSubmatch(err.Error(), -1)
	if m == nil {
		return "", 0, false
	}
	last := m[len(m)-1] // the innermost template, where the action failed
	line, _ := strconv.Atoi(last[2])
	return templateFile(fsys, dir, last[1]), line, true
}
