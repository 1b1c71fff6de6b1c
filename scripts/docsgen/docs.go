package docsgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/golangci/misspell"
)

// Blocks the docs generate. Each starts with an opening comment, ends with
// a closing one, and what lies between is rewritten:
//
//	<!-- snippet: 01-initial/scheduler/schedule_one.go ScheduleOne -->
//	<!-- /snippet -->
//
// embeds a declaration (a function, Type.Method, a type, a var or const;
// no symbol: the whole file) from the repository, with its doc comment;
//
//	<!-- diffstat: 02-filter -->
//	<!-- /diffstat -->
//
// embeds a table of the files docs/diffs/02-filter.diff changes;
//
//	<!-- diff: 02-filter -->
//	<!-- /diff -->
//
// embeds that diff without its test files, folded in <details>, so that a
// reader sees the chapter's change on the page;
//
//	<!-- workshop: 06-scheduling-queue -->
//	<!-- /workshop -->
//
// lists the chapter's workshop parts and exercise checks (workshop.go); and
//
//	<!-- output: data/01-initial-demo.txt -->
//	<!-- /output -->
//
// embeds a file that `make docs-data` (or `make bench`) wrote from a real
// run: a .md file as markdown, any other as a text block.
var blockRe = regexp.MustCompile(`(?s)<!-- (snippet|diffstat|diff|output|workshop): ([^>]*?) -->\n(.*?)<!-- /(snippet|diffstat|diff|output|workshop) -->`)

// Render rewrites every generated block of a markdown page. docDir is the
// page's directory, against which output paths are resolved.
func Render(root, docDir string, page []byte) ([]byte, error) {
	var firstErr error
	out := blockRe.ReplaceAllFunc(page, func(m []byte) []byte {
		sub := blockRe.FindSubmatch(m)
		kind, arg, closing := string(sub[1]), strings.TrimSpace(string(sub[2])), string(sub[4])
		if kind != closing {
			setErr(&firstErr, fmt.Errorf("<!-- %s: %s --> is closed by <!-- /%s -->", kind, arg, closing))
			return m
		}
		var body string
		var err error
		switch kind {
		case "snippet":
			body, err = snippet(root, arg)
		case "diffstat":
			body, err = diffstat(root, arg)
		case "diff":
			body, err = foldedDiff(root, docsPrefix(root, docDir), arg)
		case "output":
			body, err = outputBlock(docDir, arg)
		case "workshop":
			body, err = workshopBlock(root, docsPrefix(root, docDir), arg)
		}
		if err != nil {
			setErr(&firstErr, fmt.Errorf("%s %s: %w", kind, arg, err))
			return m
		}
		return []byte(fmt.Sprintf("<!-- %s: %s -->\n%s<!-- /%s -->", kind, arg, body, kind))
	})
	return out, firstErr
}

func setErr(dst *error, err error) {
	if *dst == nil {
		*dst = err
	}
}

// docsPrefix is what a page in docDir puts before a path relative to
// docs/: "" on docs/ itself, "../" on docs/reference/.
func docsPrefix(root, docDir string) string {
	rel, err := filepath.Rel(docDir, filepath.Join(root, "docs"))
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel) + "/"
}

// snippet returns a fenced code block with a declaration from a file: all
// of it, or with a third field FROM-TO, its lines FROM to TO (the doc
// comment's first line is 1), so that a post shows a long function in
// parts. A part that starts or ends inside the declaration says so with a
// "// ..." line.
func snippet(root, arg string) (string, error) {
	fields := strings.Fields(arg)
	if len(fields) == 0 || len(fields) > 3 {
		return "", fmt.Errorf("want PATH [SYMBOL [FROM-TO]]")
	}
	path := filepath.Join(root, fields[0])
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lang := strings.TrimPrefix(filepath.Ext(path), ".")
	if lang == "yml" {
		lang = "yaml"
	}
	code := string(src)
	if len(fields) >= 2 {
		if lang != "go" {
			return "", fmt.Errorf("symbols are only found in Go files")
		}
		code, err = goDecl(path, src, fields[1])
		if err != nil {
			return "", err
		}
	}
	code = strings.TrimRight(workshopMarker.ReplaceAllString(code, ""), "\n")
	if len(fields) == 3 {
		if code, err = lineRange(code, fields[2]); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("```%s\n%s\n```\n", lang, code), nil
}

// DeclLines returns a declaration as a snippet shows it, one numbered line
// each: what a writer reads to choose a snippet's FROM-TO.
func DeclLines(root, arg string) (string, error) {
	fields := strings.Fields(arg)
	if len(fields) != 2 {
		return "", fmt.Errorf("want PATH SYMBOL")
	}
	path := filepath.Join(root, fields[0])
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	code, err := goDecl(path, src, fields[1])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimRight(workshopMarker.ReplaceAllString(code, ""), "\n"), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String(), nil
}

// lineRange cuts lines FROM-TO (1-based, inclusive) out of code, marking
// the cut ends with "// ..." at the indentation of the line beside them.
func lineRange(code, spec string) (string, error) {
	var from, to int
	if _, err := fmt.Sscanf(spec, "%d-%d", &from, &to); err != nil || fmt.Sprintf("%d-%d", from, to) != spec {
		return "", fmt.Errorf("line range %q: want FROM-TO", spec)
	}
	lines := strings.Split(code, "\n")
	if from < 1 || to < from || to > len(lines) {
		return "", fmt.Errorf("line range %s is outside the declaration's %d lines", spec, len(lines))
	}
	indent := func(l string) string { return l[:len(l)-len(strings.TrimLeft(l, "\t "))] }
	part := append([]string{}, lines[from-1:to]...)
	if from > 1 {
		part = append([]string{indent(part[0]) + "// ..."}, part...)
	}
	if to < len(lines) {
		part = append(part, indent(lines[to-1])+"// ...")
	}
	return strings.Join(part, "\n"), nil
}

// workshopMarker matches a `//workshop:part NN/K` line (make workshop's
// marker, see scripts/workshop) with the empty comment line gofmt puts
// before it: the page shows the code a reader studies, not the tooling.
var workshopMarker = regexp.MustCompile(`(?m)^([ \t]*//\n)?[ \t]*//workshop:part [^\n]*\n`)

// goDecl finds a declaration by name, with its doc comment.
func goDecl(path string, src []byte, symbol string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	recv, name, isMethod := strings.Cut(symbol, ".")
	if !isMethod {
		name, recv = recv, ""
	}
	slice := func(from, to token.Pos) string {
		return string(src[fset.Position(from).Offset:fset.Position(to).Offset])
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name != name || (d.Recv == nil) != (recv == "") {
				continue
			}
			if recv != "" && receiverName(d.Recv.List[0].Type) != recv {
				continue
			}
			start := d.Pos()
			if d.Doc != nil {
				start = d.Doc.Pos()
			}
			return slice(start, d.End()), nil
		case *ast.GenDecl:
			if isMethod {
				continue
			}
			for _, s := range d.Specs {
				var names []*ast.Ident
				var doc *ast.CommentGroup
				switch s := s.(type) {
				case *ast.TypeSpec:
					names, doc = []*ast.Ident{s.Name}, s.Doc
				case *ast.ValueSpec:
					names, doc = s.Names, s.Doc
				}
				for _, n := range names {
					if n.Name != name {
						continue
					}
					if !d.Lparen.IsValid() {
						start := d.Pos()
						if d.Doc != nil {
							start = d.Doc.Pos()
						}
						return slice(start, d.End()), nil
					}
					start := s.Pos()
					if doc != nil {
						start = doc.Pos()
					}
					return slice(start, s.End()), nil
				}
			}
		}
	}
	return "", fmt.Errorf("no declaration %s in %s", symbol, path)
}

func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return receiverName(t.X)
	}
	return ""
}

// diffstat returns a table of the files a chapter's diff changes.
func diffstat(root, chapter string) (string, error) {
	diff, err := os.ReadFile(filepath.Join(root, "docs", "diffs", chapter+".diff"))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| file | added | removed |\n|---|---:|---:|\n")
	added, removed := 0, 0
	for _, s := range Stat(diff) {
		fmt.Fprintf(&b, "| `%s` | %d | %d |\n", s.File, s.Added, s.Removed)
		added += s.Added
		removed += s.Removed
	}
	fmt.Fprintf(&b, "| **total** | **%d** | **%d** |\n", added, removed)
	return b.String(), nil
}

// foldedDiff returns a chapter's diff without its test files, in a
// <details> block that a reader opens. Its fence has four backticks, so
// that a diff of a page with code blocks cannot close it.
func foldedDiff(root, prefix, chapter string) (string, error) {
	diff, err := os.ReadFile(filepath.Join(root, "docs", "diffs", chapter+".diff"))
	if err != nil {
		return "", err
	}
	code := WithoutTests(diff)
	lines := strings.Count(string(code), "\n")
	return fmt.Sprintf("<details>\n<summary>The diff without its tests (%d lines; the <a href=\"%sdiffs/%s.diff\">full diff</a> has the tests too)</summary>\n\n````diff\n%s````\n\n</details>\n",
		lines, prefix, chapter, code), nil
}

// outputBlock embeds a run's output, all of it, or with "grep=REGEX" its
// header (the command and the line saying when and where it ran) and the
// lines that match: a post quotes the few lines of a long run that show
// its point, and they stay the real run's.
func outputBlock(docDir, arg string) (string, error) {
	fields := strings.Fields(arg)
	if len(fields) == 1 {
		return output(docDir, fields[0])
	}
	pattern, ok := strings.CutPrefix(fields[1], "grep=")
	if len(fields) != 2 || !ok || strings.HasSuffix(fields[0], ".md") {
		return "", fmt.Errorf("want FILE [grep=REGEX] (grep only on text files)")
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(docDir, fields[0]))
	if err != nil {
		return "", fmt.Errorf("%w (run `make docs-data`)", err)
	}
	var kept []string
	matched := 0
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		switch {
		case i < 2 && (strings.HasPrefix(line, "$ ") || strings.HasPrefix(line, "# output of a real run")):
			kept = append(kept, line)
		case re.MatchString(line):
			kept = append(kept, line)
			matched++
		}
	}
	if matched == 0 {
		return "", fmt.Errorf("no line of %s matches %q", fields[0], pattern)
	}
	return fmt.Sprintf("```text\n%s\n```\n", strings.Join(kept, "\n")), nil
}

// output embeds a file `make docs-data` or `make bench` wrote: markdown
// as it is, anything else as a text block.
func output(docDir, rel string) (string, error) {
	data, err := os.ReadFile(filepath.Join(docDir, rel))
	if err != nil {
		return "", fmt.Errorf("%w (run `make docs-data`, or `make bench` for data/bench.*)", err)
	}
	if strings.HasSuffix(rel, ".md") {
		return strings.TrimRight(string(data), "\n") + "\n", nil
	}
	return fmt.Sprintf("```text\n%s\n```\n", strings.TrimRight(string(data), "\n")), nil
}

var linkRe = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// CheckLinks reports relative links of a markdown page whose file, or
// heading anchor, does not exist.
func CheckLinks(pagePath string, page []byte) []string {
	var problems []string
	text := stripCode(page)
	for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		resolved := pagePath
		if file != "" {
			resolved = filepath.Join(filepath.Dir(pagePath), file)
			if _, err := os.Stat(resolved); err != nil {
				problems = append(problems, fmt.Sprintf("%s: broken link %s", pagePath, target))
				continue
			}
		}
		if anchor != "" && strings.HasSuffix(resolved, ".md") {
			data, err := os.ReadFile(resolved)
			if err != nil || !hasAnchor(data, anchor) {
				problems = append(problems, fmt.Sprintf("%s: link %s names no heading", pagePath, target))
			}
		}
	}
	return problems
}

// stripCode blanks fenced code blocks, where link syntax means nothing.
func stripCode(page []byte) string {
	var out []string
	in := false
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// hasAnchor says whether a page has a heading whose GitHub anchor is name.
func hasAnchor(page []byte, name string) bool {
	for _, line := range strings.Split(stripCode(page), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if slug(heading) == name {
			return true
		}
	}
	return false
}

// Slug is GitHub's anchor for a heading, as the repository's links and
// verifydocs name it (make publish maps it to Zenn's ids).
func Slug(heading string) string { return slug(heading) }

// slug is GitHub's heading anchor: lower case, spaces to hyphens, and
// punctuation and symbols dropped, Japanese ones too (the full-width
// （）、：, the middle dot ・), while letters of any script, numbers and
// marks stay.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Misspellings reports common misspellings in a file: Go files in comments
// and strings, other files anywhere.
func Misspellings(path string, data []byte) []string {
	r := misspell.New()
	r.Compile()
	var diffs []misspell.Diff
	if strings.HasSuffix(path, ".go") {
		_, diffs = r.ReplaceGo(string(data))
	} else {
		_, diffs = r.Replace(string(data))
	}
	var out []string
	for _, d := range diffs {
		out = append(out, fmt.Sprintf("%s:%d: %q is a misspelling of %q", path, d.Line, d.Original, d.Corrected))
	}
	return out
}

// Equal reports whether two renderings are the same.
func Equal(a, b []byte) bool { return bytes.Equal(a, b) }
