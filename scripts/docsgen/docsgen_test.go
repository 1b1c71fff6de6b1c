package docsgen

import (
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

func TestCheckChapterPage(t *testing.T) {
	chapters := []string{"01-a", "02-b", "03-c"}
	nav := func(prev, next string) string {
		return "<!-- nav -->\n[← Previous](" + prev + ") · [Next →](" + next + ")\n<!-- /nav -->"
	}
	page := func(i int, top, bottom string) []byte {
		return []byte("# Title\n\n" + top + "\n\n**In short:** what you learn.\n\n## Exercises\n\n<!-- workshop: " + chapters[i] + " -->\n<!-- /workshop -->\n\n## What you learned\n\nThis.\n\n" + bottom + "\n")
	}
	tests := []struct {
		name string
		i    int
		page []byte
		want []string
	}{
		{name: "middle chapter, complete", i: 1, page: page(1, nav("01-a.md", "03-c.md"), nav("01-a.md", "03-c.md"))},
		{name: "first chapter links the README", i: 0, page: page(0, nav("../README.md", "02-b.md"), nav("../README.md", "02-b.md"))},
		{name: "newest chapter links the chapter list", i: 2, page: page(2, nav("02-b.md", "../README.md#the-chapters"), nav("02-b.md", "../README.md#the-chapters"))},
		{
			name: "wrong next link at the bottom",
			i:    1,
			page: page(1, nav("01-a.md", "03-c.md"), nav("01-a.md", "04-d.md")),
			want: []string{"p.md: a nav block does not link 03-c.md"},
		},
		{
			name: "no frame at all",
			i:    1,
			page: []byte("# Title\n\nText.\n\n## Run it\n"),
			want: []string{
				"p.md: want a nav block under the title and one at the end, found 0",
				`p.md: want a paragraph starting "**In short:** " before the first section`,
				`p.md: no "## Exercises" section`,
				`p.md: no "## What you learned" section`,
				"p.md: the Exercises section has no <!-- workshop: 02-b --> block",
			},
		},
		{
			name: "the workshop block of another chapter",
			i:    2,
			page: page(1, nav("02-b.md", "../README.md#the-chapters"), nav("02-b.md", "../README.md#the-chapters")),
			want: []string{"p.md: the Exercises section has no <!-- workshop: 03-c --> block"},
		},
		{
			name: "text after the last nav block",
			i:    1,
			page: append(page(1, nav("01-a.md", "03-c.md"), nav("01-a.md", "03-c.md")), []byte("More.\n")...),
			want: []string{"p.md: the page must end with a nav block"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CheckChapterPage("p.md", tt.page, chapters, tt.i)); diff != "" {
				t.Errorf("problems (-want, +got):\n%s", diff)
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
