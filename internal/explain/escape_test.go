package explain

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/meshc/meshc/internal/lint"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// poison appends hostile text to every string reachable from v: names,
// hosts, files, reasons, label values, diagnostics.
func poison(v reflect.Value, seen map[uintptr]bool) {
	const hostile = "\x1b[2J\x1b]0;owned\a\nforged line\u202e"
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() && v.Len() > 0 { // empty strings choose what is printed
			v.SetString(v.String() + hostile)
		}
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		poison(v.Elem(), seen)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				poison(v.Field(i), seen)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			poison(v.Index(i), seen)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.String {
			for _, k := range v.MapKeys() {
				v.SetMapIndex(k, reflect.ValueOf(v.MapIndex(k).String()+hostile))
			}
		}
	}
}

var (
	sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// control is any control character the report may not print: all
	// but its own line feeds.
	control = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")
)

// TestTextEscapesInput: with every string of the report hostile, the
// text report (plain, verbose, coloured, with routes) prints none of their
// control characters, and starts no line of the input's.
func TestTextEscapesInput(t *testing.T) {
	m := resolvetest.Resolve(loadtest.Dir(t, filepath.Join("..", "..", "examples", "bookinfo")))
	ds, err := lint.Run(context.Background(), m, lint.Analyzers(), lint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range [][2]string{{"default", "productpage-v1"}, {"istio-system", "istio-ingressgateway"}} {
		v, _ := m.View(id[0], id[1])
		rep := ProxyReport(m, v, ds)
		rep.AddRoutes(m, v)
		poison(reflect.ValueOf(&rep), map[uintptr]bool{})
		var plain, colored bytes.Buffer
		if err := WriteText(&plain, rep, TextOptions{Verbose: true}); err != nil {
			t.Fatal(err)
		}
		if err := WriteText(&colored, rep, TextOptions{Verbose: true, Color: true}); err != nil {
			t.Fatal(err)
		}
		if loc := control.FindIndex(plain.Bytes()); loc != nil {
			t.Errorf("%s: raw control character at %v:\n%s", id[1], loc, plain.Bytes()[max(0, loc[0]-80):loc[1]])
		}
		if bytes.Contains(plain.Bytes(), []byte("\nforged line")) {
			t.Errorf("%s: the input started a line", id[1])
		}
		if !bytes.Equal(sgr.ReplaceAll(colored.Bytes(), nil), plain.Bytes()) {
			t.Errorf("%s: coloured text is more than the plain text and colour codes", id[1])
		}
	}
}
