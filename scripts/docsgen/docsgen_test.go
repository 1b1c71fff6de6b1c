package docsgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStat(t *testing.T) {
	diff := `diff --git 01-a/x.go 02-b/x.go
--- 01-a/x.go
+++ 02-b/x.go
@@ -1,2 +1,3 @@
 same
-old
+new
+newer
diff --git 01-a/gone.go 01-a/gone.go
deleted file mode 100644
--- 01-a/gone.go
+++ /dev/null
@@ -1 +0,0 @@
-bye
`
	want := []DiffStat{{File: "x.go", Added: 2, Removed: 1}, {File: "gone.go", Removed: 1}}
	if d := cmp.Diff(want, Stat([]byte(diff))); d != "" {
		t.Errorf("(-want, +got):\n%s", d)
	}
}

func TestSlug(t *testing.T) {
	tests := map[string]string{
		"Run it":                        "run-it",
		"How upstream does it":          "how-upstream-does-it",
		"Chapter 01: the smallest one":  "chapter-01-the-smallest-one",
		"`make test` and CI":            "make-test-and-ci",
		"Filters, scores (and weights)": "filters-scores-and-weights",
		// Japanese headings keep their letters, the long vowel mark
		// among them, and lose full-width punctuation, as on GitHub.
		"ステップ1: Filterプラグインを実行する": "ステップ1-filterプラグインを実行する",
		"章の一覧": "章の一覧",
		"スケジューラー（前編）、キュー・Pod": "スケジューラー前編キューpod",
	}
	for in, want := range tests {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRender embeds a function, a method and a type from a Go file, and a
// run output, and leaves the rest of the page alone.
func TestRender(t *testing.T) {
	root := t.TempDir()
	src := `package p

// Hello says hello.
func Hello() string { return "hello" }

type T struct{}

// Run runs.
func (t *T) Run() {}

// Kind is a kind.
type Kind int
`
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "docs", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "data", "out.txt"), []byte("it ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "data", "t.md"), []byte("| a |\n|---|\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := "intro\n<!-- snippet: p.go Hello -->\nstale\n<!-- /snippet -->\n<!-- snippet: p.go T.Run -->\n<!-- /snippet -->\n<!-- snippet: p.go Kind -->\n<!-- /snippet -->\n<!-- output: data/out.txt -->\n<!-- /output -->\n<!-- output: data/t.md -->\n<!-- /output -->\nend\n"
	want := "intro\n<!-- snippet: p.go Hello -->\n```go\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n```\n<!-- /snippet -->\n" +
		"<!-- snippet: p.go T.Run -->\n```go\n// Run runs.\nfunc (t *T) Run() {}\n```\n<!-- /snippet -->\n" +
		"<!-- snippet: p.go Kind -->\n```go\n// Kind is a kind.\ntype Kind int\n```\n<!-- /snippet -->\n" +
		"<!-- output: data/out.txt -->\n```text\nit ran\n```\n<!-- /output -->\n" +
		"<!-- output: data/t.md -->\n| a |\n|---|\n<!-- /output -->\nend\n"
	got, err := Render(root, filepath.Join(root, "docs"), []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("(-want, +got):\n%s", d)
	}
	if _, err := Render(root, root, []byte("<!-- snippet: p.go Missing -->\n<!-- /snippet -->")); err == nil || !strings.Contains(err.Error(), "no declaration Missing") {
		t.Errorf("a missing symbol: err = %v", err)
	}
}

func TestCheckLinks(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.md")
	if err := os.WriteFile(other, []byte("# Other page\n## Run it\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "page.md")
	content := "[ok](other.md) [anchor](other.md#run-it) [web](https://example.com) [bad](missing.md) [badanchor](other.md#nope)\n```\n[in code](ignored.md)\n```\n"
	want := []string{page + ": broken link missing.md", page + ": link other.md#nope names no heading"}
	if d := cmp.Diff(want, CheckLinks(page, []byte(content))); d != "" {
		t.Errorf("(-want, +got):\n%s", d)
	}
}

func TestMisspellings(t *testing.T) {
	got := Misspellings("x.md", []byte("The scheduler recieves pods.\n"))
	want := []string{`x.md:1: "recieves" is a misspelling of "receives"`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want, +got):\n%s", d)
	}
}

func TestCheckPost(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "02-b", "scheduler"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "02-b", "scheduler", "x.go"), []byte("package scheduler\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	posts := []string{"01-a.md", "02-b.md", "02b-more.md", "03-c.md"}
	nav := func(prev, next, ref string) string {
		return "<!-- nav -->\n[← Previous](" + prev + ") · [Reference](" + ref + ") · [Next →](" + next + ")\n<!-- /nav -->"
	}
	test := "<!-- snippet: 02-b/scheduler/x_test.go TestX -->\n```go\nfunc TestX(t *testing.T) {}\n```\n<!-- /snippet -->\n"
	code := "<!-- snippet: 02-b/scheduler/x.go X -->\n```go\nfunc X() {}\n```\n<!-- /snippet -->\n"
	opening := "The problem:\n\n```text\nPending\n```\n\n```mermaid\nflowchart LR\n```\n\n> **Before you start:** read [01](01-a.md).\n\n"
	step := func(n int, body string) string {
		return fmt.Sprintf("## Step %d: a step\n\nThe code goes in `scheduler/x.go`.\n\n%s\n", n, body)
	}
	page := func(top, body, bottom string) []byte {
		return []byte("# Title\n\n" + top + "\n\n" + opening + body + "## What you learned\n\nThis.\n\n" + bottom + "\n")
	}
	good := nav("01-a.md", "02b-more.md", "reference/02-b.md")
	steps := step(1, test+code) + step(2, test)
	long := "<!-- snippet: 02-b/scheduler/x.go Y -->\n```go\n" + strings.Repeat("x\n", 46) + "```\n<!-- /snippet -->\n"
	tests := []struct {
		name string
		i    int
		page []byte
		want []string
	}{
		{name: "first post of a chapter told in two, complete", i: 1, page: page(good, steps, good)},
		{
			name: "the first post links the README; next and reference wrong at the bottom do not matter for the reference",
			i:    0,
			page: page(nav("../README.md", "02-b.md", "reference/02-b.md"), steps, nav("../README.md", "02-b.md", "")),
		},
		{
			name: "the last post links the chapter list",
			i:    3,
			page: page(nav("02b-more.md", "../README.md#the-chapters", "reference/02-b.md"), steps, nav("02b-more.md", "../README.md#the-chapters", "")),
		},
		{
			name: "wrong next link at the bottom, and no reference link at the top",
			i:    1,
			page: page(nav("01-a.md", "02b-more.md", ""), steps, nav("01-a.md", "03-c.md", "")),
			want: []string{
				"p.md: a nav block does not link 02b-more.md",
				"p.md: the top nav block does not link the reference page reference/02-b.md",
			},
		},
		{
			name: "code before its test, one step, a long snippet, reference material",
			i:    1,
			page: page(good, step(1, code+test+long)+"<!-- diff: 02-b -->\n<!-- /diff -->\n<!-- output: data/02-b-tests.txt -->\n<!-- /output -->\n", good),
			want: []string{
				`p.md: want at least two "## Step N: ..." sections, found 1`,
				`p.md: "## Step 1: a step" shows code before a test: show the test that fails first (a snippet of a _test.go file)`,
				"p.md: snippet 02-b/scheduler/x.go Y has 46 lines, at most 45 in a post: show it in parts (PATH SYMBOL FROM-TO)",
				"p.md: <!-- diff: ...--> belongs on the reference page",
				"p.md: a test listing belongs on the reference page",
			},
		},
		{
			name: "a step that says nowhere where its code goes, steps out of order",
			i:    1,
			page: page(good, "## Step 2: nowhere\n\n"+test+step(1, test), good),
			want: []string{
				`p.md: "## Step 2: nowhere": steps are numbered 1, 2, ... in order`,
				`p.md: "## Step 2: nowhere" names no file of 02-b in backticks: say where the step's code goes`,
				`p.md: "## Step 1: a step": steps are numbered 1, 2, ... in order`,
			},
		},
		{
			name: "no opening and no box",
			i:    1,
			page: []byte("# Title\n\n" + good + "\n\n" + steps + "## What you learned\n\n" + good + "\n"),
			want: []string{`p.md: no box: a blockquote starting "> **Before you start:**"`},
		},
		{
			name: "a box of six lines that links nothing, after a bare opening",
			i:    1,
			page: []byte("# Title\n\n" + good + "\n\nText.\n\n> **Before you start:**\n> a\n> b\n> c\n> d\n> e\n\n" + steps + "## What you learned\n\n" + good + "\n"),
			want: []string{
				"p.md: the opening has no picture of the loop (a ```mermaid block) before the box",
				"p.md: the opening shows no run or failing test (a fenced block or an output block) before the box",
				"p.md: the box has 6 lines, at most 5",
				"p.md: the box links nothing: it links the posts the reader needs",
			},
		},
		{
			name: "no frame at all",
			i:    1,
			page: []byte("# Title\n\nText.\n\n## Run it\n"),
			want: []string{"p.md: want a nav block under the title and one at the end, found 0"},
		},
		{
			name: "text after the last nav block, and no What you learned",
			i:    1,
			page: []byte("# Title\n\n" + good + "\n\n" + opening + steps + good + "\nMore.\n"),
			want: []string{
				"p.md: the page must end with a nav block",
				`p.md: no "## What you learned" section`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CheckPost(root, "p.md", tt.page, posts, tt.i, "02-b")); diff != "" {
				t.Errorf("problems (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestProseWords(t *testing.T) {
	tests := []struct {
		name, page string
		want       int
	}{
		{name: "plain words", page: "One two, three.", want: 3},
		{name: "inline code is one word", page: "Call `sched.ScheduleOne(ctx, fwk)` now.", want: 3},
		{name: "a link's target does not count", page: "See [the glossary](glossary.md#a-b-c) here.", want: 4},
		{name: "fenced code does not count", page: "Before.\n\n```go\nfunc a() { b c d }\n```\n\nAfter.", want: 2},
		{name: "generated blocks do not count", page: "A.\n<!-- output: data/x.txt -->\n```text\nmany words here\n```\n<!-- /output -->\nB.", want: 2},
		{name: "details and comments do not count", page: "A <!-- a note --> B\n<details>\n<summary>fold</summary>\nhidden words\n</details>\nC", want: 3},
		{name: "punctuation alone is no word", page: "A - B | C → D", want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ProseWords(tt.page)); diff != "" {
				t.Errorf("words (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestCheckReference(t *testing.T) {
	root := t.TempDir()
	full := "# Ref\n\n[post](../02-b.md), [more](../02b-more.md)\n\n## The diff\n\n<!-- diff: 02-b -->\n<!-- /diff -->\n\n## Tests\n\n## Upstream map\n\n## What this chapter leaves out\n\n## Exercises\n\n<!-- workshop: 02-b -->\n<!-- /workshop -->\n"
	tests := []struct {
		name, page string
		first      bool
		want       []string
	}{
		{name: "complete", page: full},
		{name: "the first chapter has no diff", page: strings.Replace(full, "<!-- diff: 02-b -->\n<!-- /diff -->\n", "", 1), first: true},
		{
			name: "a later chapter must show its diff",
			page: strings.Replace(full, "<!-- diff: 02-b -->\n<!-- /diff -->\n", "", 1),
			want: []string{"r.md: the diff section has no <!-- diff: 02-b --> block"},
		},
		{
			name: "a post not linked, a section missing, the workshop block of another chapter",
			page: strings.Replace(strings.Replace(strings.Replace(full, "[more](../02b-more.md)", "", 1), "## Upstream map\n", "", 1), "workshop: 02-b", "workshop: 03-c", 1),
			want: []string{
				"r.md: does not link the post ../02b-more.md",
				`r.md: no "## Upstream map" section`,
				"r.md: the Exercises section has no <!-- workshop: 02-b --> block",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CheckReference(root, "r.md", []byte(tt.page), "02-b", []string{"02-b.md", "02b-more.md"}, tt.first)); diff != "" {
				t.Errorf("problems (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestLineRange(t *testing.T) {
	code := "// F does f.\nfunc F() {\n\ta()\n\tb()\n}"
	tests := []struct {
		spec, want, err string
	}{
		{spec: "1-5", want: code},
		{spec: "3-4", want: "\t// ...\n\ta()\n\tb()\n\t// ..."},
		{spec: "1-2", want: "// F does f.\nfunc F() {\n// ..."},
		{spec: "4-6", err: `line range 4-6 is outside the declaration's 5 lines`},
		{spec: "3", err: `line range "3": want FROM-TO`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := lineRange(code, tt.spec)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.err, gotErr); diff != "" {
				t.Fatalf("error (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestWithoutTests(t *testing.T) {
	diff := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n+code\n" +
		"diff --git a/x_test.go b/x_test.go\n--- a/x_test.go\n+++ b/x_test.go\n+test\n" +
		"diff --git a/y.go b/y.go\n--- a/y.go\n+++ b/y.go\n-old\n"
	want := "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n+code\n" +
		"diff --git a/y.go b/y.go\n--- a/y.go\n+++ b/y.go\n-old\n"
	if diff := cmp.Diff(want, string(WithoutTests([]byte(diff)))); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

func TestSnippetHidesWorkshopMarkers(t *testing.T) {
	root := t.TempDir()
	src := "package a\n\n// A does a.\n//\n//workshop:part 06/1\nfunc A() {}\n\n//workshop:part 06/2\nfunc B() {}\n"
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arg, want string }{
		{"a.go A", "```go\n// A does a.\nfunc A() {}\n```\n"},
		{"a.go B", "```go\nfunc B() {}\n```\n"},
	} {
		got, err := snippet(root, tc.arg)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("snippet %s (-want, +got):\n%s", tc.arg, d)
		}
	}
}

func TestSnippetRangeIsOfTheDeclaration(t *testing.T) {
	root := t.TempDir()
	src := "package a\n\nimport \"fmt\"\n\n// A prints.\nfunc A() {\n\tfmt.Println(1)\n\tfmt.Println(2)\n}\n"
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := snippet(root, "a.go A 3-4")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("```go\n\t// ...\n\tfmt.Println(1)\n\tfmt.Println(2)\n\t// ...\n```\n", got); diff != "" {
		t.Errorf("snippet (-want, +got):\n%s", diff)
	}
}

func TestOutputBlockGrep(t *testing.T) {
	dir := t.TempDir()
	run := "$ make e2e\n# output of a real run by `make docs-data` on d\nCHAPTER SCENARIO\n10-x gang-a PASS\n10-x plain PASS\n11-y gang-a PASS\n"
	if err := os.WriteFile(filepath.Join(dir, "e2e.txt"), []byte(run), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		arg, want, err string
	}{
		{arg: "e2e.txt grep=^10-x\\s+gang", want: "```text\n$ make e2e\n# output of a real run by `make docs-data` on d\n10-x gang-a PASS\n```\n"},
		{arg: "e2e.txt grep=nothing", err: `no line of e2e.txt matches "nothing"`},
		{arg: "e2e.txt lines=3", err: "want FILE [grep=REGEX] (grep only on text files)"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := outputBlock(dir, tt.arg)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.err, gotErr); diff != "" {
				t.Fatalf("error (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("block (-want, +got):\n%s", diff)
			}
		})
	}
}
