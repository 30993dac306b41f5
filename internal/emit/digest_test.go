package emit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/resolve"
)

// TestMeshReadsAreDigested keeps resolve.Digester honest: meshc diff
// skips a proxy whose digest is the same on both sides, which is sound
// only while emit reads the mesh through the methods the digest covers.
// A new read of the mesh here must be added to the digest first.
func TestMeshReadsAreDigested(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		// meshes are the names a *resolve.Mesh goes by in a function.
		ast.Inspect(f, func(n ast.Node) bool {
			fn, ok := n.(*ast.FuncDecl)
			if !ok {
				return true
			}
			meshes := map[string]bool{}
			for _, p := range fn.Type.Params.List {
				if s, ok := p.Type.(*ast.StarExpr); ok && exprString(s.X) == "resolve.Mesh" {
					for _, id := range p.Names {
						meshes[id.Name] = true
					}
				}
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				var viaMesh bool
				switch x := sel.X.(type) {
				case *ast.SelectorExpr:
					viaMesh = x.Sel.Name == "mesh"
				case *ast.Ident:
					viaMesh = meshes[x.Name]
				}
				if viaMesh && !slices.Contains(resolve.DigestedMeshReads(), sel.Sel.Name) {
					t.Errorf("%s: emit reads Mesh.%s, which resolve.Digester does not cover", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
			return false
		})
	}
}

func exprString(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		return exprString(s.X) + "." + s.Sel.Name
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
