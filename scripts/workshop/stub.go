package workshop

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// marker is the line that marks a function as code the learner writes in
// one part of one chapter: `//workshop:part 06/1`. It is a Go directive
// (no space after //), so godoc hides it and the chapter reads cleanly.
var marker = regexp.MustCompile(`^//workshop:part ([0-9]{2})/([1-9])$`)

// Stubbed is one function whose body the copy replaced.
type Stubbed struct {
	Part int
	File string // relative to the chapter
	Func string // "PriorityQueue.Pop"
	// Lines counts the lines of the finished body: what the learner
	// writes (MarkedFuncs fills it).
	Lines int
}

// upstreamURL is where the TODOs point for upstream's code.
const upstreamURL = "https://github.com/kubernetes/kubernetes/blob/v1.37.1/"

// MakeCopy copies the chapter folder src to dst and replaces the body of
// every function marked for one of the parts in stub (part numbers from 1)
// with a stub that compiles: zero values and a TODO naming the part, the
// docs section and upstream's file. It returns what it replaced, and fails
// if a part to stub has no marked function.
func MakeCopy(src, dst string, spec *Spec, stub map[int]bool) ([]Stubbed, error) {
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("%s exists", dst)
	}
	var all []Stubbed
	stubbedFiles := map[string][]byte{}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			out, done, err := stubSource(rel, data, spec, stub)
			if err != nil {
				return err
			}
			if len(done) > 0 {
				all = append(all, done...)
				stubbedFiles[target] = out
			}
			data = out
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return nil, err
	}
	for k := range stub {
		found := false
		for _, s := range all {
			found = found || s.Part == k
		}
		if !found {
			return nil, fmt.Errorf("%s: no function is marked //workshop:part %02d/%d", src, spec.Number, k)
		}
	}
	if err := removeUnusedImports(dst, stubbedFiles); err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Part != all[j].Part {
			return all[i].Part < all[j].Part
		}
		return all[i].File+all[i].Func < all[j].File+all[j].Func
	})
	return all, nil
}

// stubSource replaces the bodies of the functions of src marked for the
// parts in stub.
func stubSource(name string, src []byte, spec *Spec, stub map[int]bool) ([]byte, []Stubbed, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	type splice struct {
		from, to int
		text     string
	}
	var splices []splice
	var done []Stubbed
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Doc == nil || fn.Body == nil {
			continue
		}
		for _, c := range fn.Doc.List {
			m := marker.FindStringSubmatch(c.Text)
			if m == nil {
				continue
			}
			chapter, _ := strconv.Atoi(m[1])
			part, _ := strconv.Atoi(m[2])
			if chapter != spec.Number || !stub[part] {
				continue
			}
			if part > len(spec.Parts) {
				return nil, nil, fmt.Errorf("%s: %s is marked for part %d, and the chapter has %d", name, c.Text, part, len(spec.Parts))
			}
			s := Stubbed{Part: part, File: name, Func: funcName(fn)}
			splices = append(splices, splice{
				from: fset.Position(fn.Body.Lbrace).Offset,
				to:   fset.Position(fn.Body.Rbrace).Offset + 1,
				text: stubBody(fn, s, spec.Parts[part-1]),
			})
			done = append(done, s)
			// One stub per function, even if two parts of this chapter
			// marked it.
			break
		}
	}
	if len(splices) == 0 {
		return src, nil, nil
	}
	out := append([]byte{}, src...)
	for i := len(splices) - 1; i >= 0; i-- {
		s := splices[i]
		out = append(out[:s.from], append([]byte(s.text), out[s.to:]...)...)
	}
	return out, done, nil
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch r := t.(type) {
	case *ast.Ident:
		return r.Name + "." + fn.Name.Name
	case *ast.IndexExpr:
		return exprString(r.X) + "." + fn.Name.Name
	case *ast.IndexListExpr:
		return exprString(r.X) + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// stubBody is the body a stub gets: the TODO, then a return of zero values.
func stubBody(fn *ast.FuncDecl, s Stubbed, p Part) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\n\t// TODO(workshop part %d, %s): write %s.\n", s.Part, p.Title, s.Func)
	name := s.Func[strings.LastIndex(s.Func, ".")+1:]
	if c, ok := p.Counterparts[name]; ok {
		name = c
	}
	var found []string
	for _, u := range p.Upstream {
		if upstreamLookup(u, name) {
			found = append(found, u)
		}
	}
	switch {
	case len(found) > 0:
		// Point at the files that have a function of that name.
		fmt.Fprintf(&b, "\t// Read %s, and upstream's %s in\n", p.Doc, name)
		p.Upstream = found
	case len(p.Upstream) > 1:
		fmt.Fprintf(&b, "\t// Read %s, and the code that does this upstream, in one of\n", p.Doc)
	default:
		fmt.Fprintf(&b, "\t// Read %s, and the code that does this upstream, in\n", p.Doc)
	}
	for _, u := range p.Upstream {
		fmt.Fprintf(&b, "\t// %s%s\n", upstreamURL, u)
	}
	b.WriteString("\t// The unit tests of the part are the spec; the page's code snippets\n\t// show the finished function: read them when you are done, or stuck.\n")
	if ret := zeroReturn(fn.Type.Results); ret != "" {
		b.WriteString("\t" + ret + "\n")
	}
	b.WriteString("}")
	return b.String()
}

// upstreamLookup is upstreamHas; tests replace it, so that they do not
// depend on the module cache.
var upstreamLookup = upstreamHas

// upstreamHas says whether the v1.37.1 file (relative to k8s.io/kubernetes)
// in the module cache declares a function or method of that name, so a
// TODO names upstream's function only where upstream has one (the
// chapters' own functions, such as the Gang plugin's Unreserve, have none).
func upstreamHas(file, name string) bool {
	src, err := os.ReadFile(filepath.Join(upstreamDir(), filepath.FromSlash(file)))
	if err != nil {
		return false
	}
	return regexp.MustCompile(`(?m)^func (\([^)]*\) )?` + regexp.QuoteMeta(name) + `[\[(]`).Match(src)
}

// upstreamDir is k8s.io/kubernetes v1.37.1 in the module cache, asked of
// go env once.
var upstreamDir = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@v1.37.1")
})

// zeroReturn is the return statement of a stub: bare for named results,
// zero values otherwise, none for a function without results.
func zeroReturn(results *ast.FieldList) string {
	if results == nil || len(results.List) == 0 {
		return ""
	}
	if len(results.List[0].Names) > 0 {
		return "return"
	}
	var vals []string
	for _, r := range results.List {
		vals = append(vals, zeroValue(r.Type))
	}
	return "return " + strings.Join(vals, ", ")
}

func zeroValue(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.StarExpr, *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType:
		if a, ok := t.(*ast.ArrayType); ok && a.Len != nil {
			return exprString(t) + "{}"
		}
		return "nil"
	case *ast.Ident:
		switch t.Name {
		case "error", "any":
			return "nil"
		case "bool":
			return "false"
		case "string":
			return `""`
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
			"uintptr", "float32", "float64", "byte", "rune", "complex64", "complex128":
			return "0"
		}
	}
	// A named type may be a struct, an interface or a number: *new(T) is
	// its zero value whichever it is.
	return "*new(" + exprString(t) + ")"
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	if err := format.Node(&b, token.NewFileSet(), e); err != nil {
		return fmt.Sprintf("%T", e)
	}
	return b.String()
}

// removeUnusedImports drops, from the stubbed files, the imports that only
// the replaced bodies used (Go refuses an unused import), then gofmts them.
// files maps each stubbed file's path to its text.
func removeUnusedImports(dir string, files map[string][]byte) error {
	var paths []string
	for file, src := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("stubbed %s does not parse: %w", file, err)
		}
		for _, spec := range f.Imports {
			if spec.Name == nil {
				p, _ := strconv.Unquote(spec.Path.Value)
				paths = append(paths, p)
			}
		}
	}
	names, err := packageNames(dir, paths)
	if err != nil {
		return err
	}
	for file, src := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, src, 0)
		if err != nil {
			return fmt.Errorf("stubbed %s does not parse: %w", file, err)
		}
		used := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				// An unresolved identifier before a dot is a package; a
				// local variable of the same name is not.
				if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
					used[id.Name] = true
				}
			}
			return true
		})
		out := append([]byte{}, src...)
		// From the last import up, so earlier offsets stay valid.
		for i := len(f.Imports) - 1; i >= 0; i-- {
			spec := f.Imports[i]
			p, _ := strconv.Unquote(spec.Path.Value)
			name := names[p]
			if spec.Name != nil {
				name = spec.Name.Name
			}
			if name == "" || name == "_" || name == "." || used[name] {
				continue
			}
			from, to := fset.Position(spec.Pos()).Offset, fset.Position(spec.End()).Offset
			// The whole line when the spec stands alone on it, so no blank
			// line is left inside the import block.
			lineStart := bytes.LastIndexByte(out[:from], '\n') + 1
			lineEnd := to + bytes.IndexByte(out[to:], '\n')
			if lineEnd >= to && strings.TrimSpace(string(out[lineStart:from])) == "" && strings.TrimSpace(string(out[to:lineEnd])) == "" {
				from, to = lineStart, lineEnd+1
			}
			out = append(out[:from], out[to:]...)
		}
		formatted, err := format.Source(out)
		if err != nil {
			return fmt.Errorf("stubbed %s: %w", file, err)
		}
		if err := os.WriteFile(file, formatted, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// packageNames asks go list for the package name of each import path, in
// the copy's module (a path's last element is not always its name).
func packageNames(dir string, paths []string) (map[string]string, error) {
	names := map[string]string{}
	if len(paths) == 0 {
		return names, nil
	}
	cmd := exec.Command("go", append([]string{"list", "-e", "-f", "{{.ImportPath}} {{.Name}}"}, paths...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v: %s", dir, err, stderr.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, n, ok := strings.Cut(line, " "); ok {
			names[p] = n
		}
	}
	return names, nil
}

// MarkedFuncs lists, per part, the functions of the chapter folder dir
// marked for the chapter's parts: what the learner writes.
func MarkedFuncs(dir string, spec *Spec) (map[int][]Stubbed, error) {
	out := map[int][]Stubbed{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, rel, src, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Doc == nil || fn.Body == nil {
				continue
			}
			for _, c := range fn.Doc.List {
				if m := marker.FindStringSubmatch(c.Text); m != nil {
					chapter, _ := strconv.Atoi(m[1])
					part, _ := strconv.Atoi(m[2])
					if chapter == spec.Number {
						lines := max(fset.Position(fn.Body.Rbrace).Line-fset.Position(fn.Body.Lbrace).Line-1, 1)
						out[part] = append(out[part], Stubbed{Part: part, File: filepath.ToSlash(rel), Func: funcName(fn), Lines: lines})
					}
				}
			}
		}
		return nil
	})
	return out, err
}
