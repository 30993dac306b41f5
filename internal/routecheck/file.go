// Package routecheck runs the routing tests of meshc test: YAML files of
// requests (internal/request.Call) and what should happen to them,
// checked against the proxies' Envoy configuration as meshc builds it
// (docs/test-files.md).
package routecheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/meshc/meshc/internal/inputfile"
	"github.com/meshc/meshc/internal/request"
)

// File is a test file.
type File struct {
	Tests []Case `yaml:"tests"`
	// Path names the file; set by Load.
	Path string `yaml:"-"`
}

// Case is one request and what should happen to it.
type Case struct {
	Name         string `yaml:"name"`
	request.Call `yaml:",inline"`
	Expect       Expect `yaml:"expect"`
	// Line is where the case starts in its file; set by Load.
	Line int `yaml:"-"`
}

// Expect is what a case asserts; a field left out is not checked.
type Expect struct {
	// Envoy resource names, as meshc build writes them.
	Listener           *string `yaml:"listener"`
	FilterChain        *string `yaml:"filterChain"`
	RouteConfiguration *string `yaml:"routeConfiguration"`
	VirtualHost        *string `yaml:"virtualHost"`
	Route              *string `yaml:"route"`
	// VirtualService ("namespace/name") and Rule ("http[1]", "tcp[0]")
	// wrote the route taken.
	VirtualService *string `yaml:"virtualService"`
	Rule           *string `yaml:"rule"`
	// Cluster is the one cluster sent to; Host, Subset and Port its
	// destination, read from an outbound cluster's name.
	Cluster *string `yaml:"cluster"`
	Host    *string `yaml:"host"`
	Subset  *string `yaml:"subset"`
	Port    *uint32 `yaml:"port"`
	// Weighted is a weighted split, in order.
	Weighted []WeightedExpect `yaml:"weighted"`
	// Redirect and DirectResponse are the status of such an action.
	Redirect       *uint32 `yaml:"redirect"`
	DirectResponse *uint32 `yaml:"directResponse"`
	// Path and Authority are the request's as forwarded, rewrites
	// applied.
	Path      *string `yaml:"path"`
	Authority *string `yaml:"authority"`
	// HeadersAdded are request headers the route adds.
	HeadersAdded map[string]string `yaml:"headersAdded"`
	// NoRoute says the request goes nowhere: the walk stops (StoppedAt
	// says where, optionally).
	NoRoute   *bool   `yaml:"noRoute"`
	StoppedAt *string `yaml:"stoppedAt"`
}

// WeightedExpect is one target of a split: a cluster, or a host and
// subset, with its weight.
type WeightedExpect struct {
	Cluster string `yaml:"cluster"`
	Host    string `yaml:"host"`
	Subset  string `yaml:"subset"`
	Weight  uint32 `yaml:"weight"`
}

// FormatError is a test file that cannot be read as one.
type FormatError struct {
	Path string
	Line int
	Msg  string
}

func (e *FormatError) Error() string {
	if e.Line == 0 {
		return e.Path + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
}

// yamlLine finds "line N: msg" in the YAML decoder's errors.
var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Load reads a test file strictly: an unknown field, a value of the
// wrong type or a case without from or target is a *FormatError at its
// line.
func Load(path string) (*File, error) {
	data, err := inputfile.Read(path, inputfile.Options{})
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a test file from data as Load does.
func Parse(path string, data []byte) (*File, error) {
	f := &File{Path: path}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FormatError{Path: path, Msg: "no tests"}
		}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			return nil, &FormatError{Path: path, Line: n, Msg: m[2]}
		}
		return nil, &FormatError{Path: path, Msg: err.Error()}
	}
	// Decode again as nodes for each case's line.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil && len(root.Content) > 0 {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value != "tests" {
				continue
			}
			for j, item := range m.Content[i+1].Content {
				if j < len(f.Tests) {
					f.Tests[j].Line = item.Line
				}
			}
		}
	}
	if len(f.Tests) == 0 {
		return nil, &FormatError{Path: path, Msg: "no tests"}
	}
	for i := range f.Tests {
		c := &f.Tests[i]
		switch {
		case c.From == "":
			return nil, &FormatError{Path: path, Line: c.Line, Msg: "a test needs from: the requesting proxy"}
		case c.Target == "":
			return nil, &FormatError{Path: path, Line: c.Line, Msg: "a test needs target: a URL or host:port"}
		}
		if c.Name == "" {
			c.Name = fmt.Sprintf("%s:%d", path, c.Line)
		}
	}
	return f, nil
}
