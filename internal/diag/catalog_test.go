package diag

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

func TestCatalogWellFormed(t *testing.T) {
	codeRE := regexp.MustCompile(`^MC[1-9]\d{3}$`)
	nameRE := regexp.MustCompile(`^[A-Z][A-Za-z0-9]+$`)
	seen := map[string]bool{}
	prev := ""
	for _, e := range Catalog() {
		if !codeRE.MatchString(e.Code) || !nameRE.MatchString(e.Name) {
			t.Errorf("%s %s: code must look like MC1234 and name be CamelCase", e.Code, e.Name)
		}
		if e.Code <= prev {
			t.Errorf("%s is out of order after %s", e.Code, prev)
		}
		prev = e.Code
		if seen[e.Name] {
			t.Errorf("name %s used twice", e.Name)
		}
		seen[e.Name] = true
		if e.Severity < Info || e.Severity > Error || e.Summary == "" || e.Doc == "" {
			t.Errorf("%s is missing severity, summary or doc", e.Code)
		}
		if got, ok := Lookup(strings.ToLower(e.Name)); !ok || got.Code != e.Code {
			t.Errorf("Lookup(%s) = %v, %v", e.Name, got.Code, ok)
		}
	}
}

// TestNoCodeLiterals: passes and analyzers report through the typed
// entries, so outside the catalog and tests no source spells a code; a
// code therefore cannot ship without its entry and docs.
func TestNoCodeLiterals(t *testing.T) {
	literal := regexp.MustCompile(`"(MC|IST)\d{4}`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || isCatalogFile(root, path) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range literal.FindAll(src, -1) {
			t.Errorf("%s spells the code %s; report through its catalog entry", path, m[1:])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIstioAliases: each IST code maps to the entries that list it, and an
// unknown one to none; a code several entries list maps to them all.
func TestIstioAliases(t *testing.T) {
	for code, want := range map[string]string{"ist0110": "MC6002", "IST0111": "MC6001", "IST9999": ""} {
		got := ""
		for _, e := range ByIstioCode(code) {
			got += e.Code
		}
		if got != want {
			t.Errorf("ByIstioCode(%s) = %q, want %q", code, got, want)
		}
	}
	for _, e := range ByIstioCode("IST0101") {
		if !slices.Contains(e.Istio, "IST0101") {
			t.Errorf("ByIstioCode(IST0101) returned %s, which does not list it", e.Code)
		}
	}
	if n := len(ByIstioCode("IST0101")); n < 2 {
		t.Errorf("IST0101 maps to %d entries; several meshc codes report a missing reference", n)
	}
}

func TestDocsUpToDate(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	testfiles.Golden(t, filepath.Join("..", "..", "docs", "diagnostics.md"), b.Bytes())
}

func TestREADMEListsEveryCode(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Catalog() {
		if !bytes.Contains(readme, []byte(e.Code)) || !bytes.Contains(readme, []byte(e.Name)) {
			t.Errorf("README.md does not list %s %s", e.Code, e.Name)
		}
	}
}

// isCatalogFile: the catalog's own files are where codes are spelt.
func isCatalogFile(root, path string) bool {
	dir, file := filepath.Split(path)
	return filepath.Clean(dir) == filepath.Join(root, "internal", "diag") && strings.HasPrefix(file, "catalog")
}

// TestTemplatesMatchArgs: each template has one verb per argument, of the
// argument's type, so a message renders without fmt's error marks.
func TestTemplatesMatchArgs(t *testing.T) {
	verb := regexp.MustCompile(`%[-+# 0]*(?:\[(\d+)\])?[0-9]*(?:\.[0-9]+)?([a-zA-Z%])`)
	for _, e := range Catalog() {
		for _, m := range e.Messages {
			if m.Entry != e {
				t.Errorf("%s: template %q belongs to %s", e.Code, m.Text, m.Entry.Code)
			}
			// verbs[i] are the verbs argument i is formatted with; an
			// explicit index ([n]) reuses an argument.
			verbs := map[int]string{}
			next := 0
			for _, v := range verb.FindAllStringSubmatch(m.Text, -1) {
				if v[2] == "%" {
					continue
				}
				if v[1] != "" {
					next, _ = strconv.Atoi(v[1])
					next--
				}
				verbs[next] += v[2]
				next++
			}
			if len(verbs) != len(m.Args) {
				t.Errorf("%s: %q has verbs for %d arguments, declares %d", e.Code, m.Text, len(verbs), len(m.Args))
				continue
			}
			names := map[string]bool{}
			for i, a := range m.Args {
				want := "sqv"
				if a.Type == Number {
					want = "dv"
				}
				if strings.Trim(verbs[i], want) != "" {
					t.Errorf("%s: %q formats %s argument %s with %%%s", e.Code, m.Text, a.Type, a.Name, verbs[i])
				}
				if names[a.Name] || a.Name == "" {
					t.Errorf("%s: %q: argument name %q empty or used twice", e.Code, m.Text, a.Name)
				}
				names[a.Name] = true
			}
		}
	}
}
