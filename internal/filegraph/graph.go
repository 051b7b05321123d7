package filegraph

import (
	"fmt"
	"go/ast"
	"go/types"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Graph is one package's file-to-file references, by base file name.
type Graph struct {
	Package string                     // import path
	Files   []string                   // sorted
	Edges   map[string]map[string]bool // from -> to
	// Why holds, for each edge, the names that make it.
	Why map[[2]string]map[string]bool
}

// Load reads the packages the patterns name, from dir, with the build tags
// given (none for the product build), and returns each one's file graph.
// Test files are left out.
func Load(dir string, tags []string, patterns ...string) ([]Graph, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo,
		Dir: dir,
	}
	if len(tags) > 0 {
		cfg.BuildFlags = []string{"-tags=" + strings.Join(tags, ",")}
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	var out []Graph
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", p.PkgPath, p.Errors[0])
		}
		out = append(out, build(p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Package < out[j].Package })
	return out, nil
}

func build(p *packages.Package) Graph {
	g := Graph{Package: p.PkgPath, Edges: map[string]map[string]bool{}, Why: map[[2]string]map[string]bool{}}
	for _, f := range p.Syntax {
		g.Files = append(g.Files, filepath.Base(p.Fset.File(f.Pos()).Name()))
	}
	sort.Strings(g.Files)
	for _, f := range p.Syntax {
		from := filepath.Base(p.Fset.File(f.Pos()).Name())
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := p.TypesInfo.Uses[id]
			if obj == nil || obj.Pkg() != p.Types || !declaredAtTop(obj) {
				return true
			}
			to := filepath.Base(p.Fset.Position(obj.Pos()).Filename)
			if to == from || to == "" {
				return true
			}
			if g.Edges[from] == nil {
				g.Edges[from] = map[string]bool{}
			}
			g.Edges[from][to] = true
			k := [2]string{from, to}
			if g.Why[k] == nil {
				g.Why[k] = map[string]bool{}
			}
			g.Why[k][id.Name] = true
			return true
		})
	}
	return g
}

// declaredAtTop reports whether obj is a package-level name, or a method or
// field of a package-level type.
func declaredAtTop(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Func:
		if sig, ok := o.Type().(*types.Signature); ok && sig.Recv() != nil {
			return true
		}
	case *types.Var:
		if o.IsField() {
			return true
		}
	}
	return obj.Parent() == obj.Pkg().Scope()
}

// Cycles returns the graph's strongly connected components of more than
// one file, each sorted, largest first.
func (g Graph) Cycles() [][]string {
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	var stack []string
	var out [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for w := range g.Edges[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			if len(c) > 1 {
				sort.Strings(c)
				out = append(out, c)
			}
		}
	}
	for _, f := range g.Files {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}
