package doclinks

import (
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the module's import path (go.mod's first line).
const modulePath = "github.com/leyworks/ley"

// pkg is one package's top-level names: its types, funcs, vars and
// consts, and each type's methods and fields ("T.M").
type pkg struct {
	dir   string
	name  string
	syms  map[string]bool
	files []*ast.File
}

// TestDocLinksResolve parses every package of the module (build tags
// aside: every non-test .go file) and checks each doc link of its comments
// against the names it declares, or, for [pkg.Name], against that
// package's (standard library links are taken as they are).
func TestDocLinksResolve(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*pkg{} // by import path
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", "third_party", "dist":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		ip := modulePath
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		p := pkgs[ip]
		if p == nil {
			p = &pkg{dir: filepath.Dir(path), name: f.Name.Name, syms: map[string]bool{}}
			pkgs[ip] = p
		}
		p.files = append(p.files, f)
		declare(p.syms, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for ip, p := range pkgs {
		for _, f := range p.files {
			imports := map[string]string{} // local name -> import path
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				name := path[strings.LastIndexByte(path, '/')+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				imports[name] = path
			}
			for _, cg := range docComments(f) {
				var missing []string
				parser := comment.Parser{
					LookupSym: func(recv, name string) bool {
						key := name
						if recv != "" {
							key = recv + "." + name
						}
						if p.syms[key] {
							return true
						}
						missing = append(missing, key)
						return false
					},
					LookupPackage: func(name string) (string, bool) {
						path, ok := imports[name]
						if !ok {
							return "", false
						}
						return path, true
					},
				}
				d := parser.Parse(cg.Text())
				// Links into other packages of the module must name
				// something there.
				walkLinks(d, func(l *comment.DocLink) {
					if l.ImportPath == "" || !strings.HasPrefix(l.ImportPath, modulePath) {
						return
					}
					q := pkgs[l.ImportPath]
					key := l.Name
					if l.Recv != "" {
						key = l.Recv + "." + l.Name
					}
					if q == nil || (key != "" && !q.syms[key]) {
						missing = append(missing, l.ImportPath+"."+key)
					}
				})
				for _, m := range missing {
					if looksLikeLink(cg.Text(), m) {
						bad++
						t.Errorf("%s: [%s] names nothing in %s", fset.Position(cg.Pos()), m, ip)
					}
				}
			}
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("found %d packages under %s; the walk is broken", len(pkgs), root)
	}
	t.Logf("%d packages checked, %d links that name nothing", len(pkgs), bad)
}

// looksLikeLink reports whether text holds [name] as a doc link would
// (the parser also asks about bracketed words it would not link, such as
// a slice index; only a bracketed identifier counts).
func looksLikeLink(text, name string) bool {
	if i := strings.LastIndexByte(name, '/'); i >= 0 { // a module path: [pkg.Name] in the text
		name = name[i+1:]
	}
	return strings.Contains(text, "["+name+"]")
}

// declare records f's top-level names in syms.
func declare(syms map[string]bool, f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				syms[d.Name.Name] = true
				continue
			}
			syms[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					syms[s.Name.Name] = true
					fieldsOf(syms, s.Name.Name, s.Type)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						syms[n.Name] = true
					}
				}
			}
		}
	}
}

// fieldsOf records a struct's fields and an interface's methods as T.F.
func fieldsOf(syms map[string]bool, typ string, e ast.Expr) {
	var list *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		list = e.Fields
	case *ast.InterfaceType:
		list = e.Methods
	}
	if list == nil {
		return
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			syms[typ+"."+n.Name] = true
		}
	}
}

// recvName is a method receiver's type name, without * or type parameters.
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// docComments returns f's package doc and the docs of its declarations
// and their specs and fields.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, cg)
		}
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			add(n.Doc)
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.TypeSpec:
			add(n.Doc)
		case *ast.ValueSpec:
			add(n.Doc)
		case *ast.Field:
			add(n.Doc)
		}
		return true
	})
	return out
}

// walkLinks calls f for every doc link in d.
func walkLinks(d *comment.Doc, f func(*comment.DocLink)) {
	var text func([]comment.Text)
	text = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case *comment.DocLink:
				f(t)
			case *comment.Link:
				text(t.Text)
			case *comment.Italic, comment.Plain:
			}
		}
	}
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Paragraph:
			text(b.Text)
		case *comment.Heading:
			text(b.Text)
		case *comment.List:
			for _, it := range b.Items {
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						text(p.Text)
					}
				}
			}
		}
	}
}
