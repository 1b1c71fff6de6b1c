package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"minisched/scripts/docsgen"
)

func TestUnwrap(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "English prose joins with a space", in: "one\ntwo\n\nthree\n", want: "one two\n\nthree\n"},
		{name: "Japanese joins without one", in: "日本語の\n文です。\n", want: "日本語の文です。\n"},
		{name: "a list item and its continuation", in: "- first\n  more\n- second\n", want: "- first more\n- second\n"},
		{name: "code stays", in: "```go\na\nb\n```\n", want: "```go\na\nb\n```\n"},
		{name: "a quote joins its own lines", in: "> **補足:** 一行目\n> 二行目\n", want: "> **補足:** 一行目二行目\n"},
		{name: "tables and headings stay", in: "## A\n| a |\n|---|\n", want: "## A\n| a |\n|---|\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, unwrap(tt.in)); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

// TestZennID: markdown-it-anchor's default slugify, as Zenn gives ids.
func TestZennID(t *testing.T) {
	tests := map[string]string{
		"What you learned":  "what-you-learned",
		"見出し":               "%E8%A6%8B%E5%87%BA%E3%81%97",
		"ステップ1: Filter":     "%E3%82%B9%E3%83%86%E3%83%83%E3%83%971%3A-filter",
		"Run it (on KWOK)!": "run-it-(on-kwok)!",
	}
	for in, want := range tests {
		if got := zennID(in); got != want {
			t.Errorf("zennID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHeadingIDs(t *testing.T) {
	md := "## ステップ1: `Filter`を書く\n## 補足\n## 補足\n```\n## not a heading\n```\n##### 深い見出し\n"
	want := map[string]string{
		"ステップ1-filterを書く": zennID("ステップ1: Filterを書く"),
		"補足":              zennID("補足"),
		"補足-1":            zennID("補足") + "-1",
	}
	if diff := cmp.Diff(want, headingIDs(md)); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

func TestMessagesAndDetails(t *testing.T) {
	in := "> **補足:** 一行目\n> 二行目\n\n<details>\n<summary>The `diff`</summary>\n\n```diff\n+x\n```\n\n</details>\n| a<br>b |\n"
	want := ":::message\n**補足:** 一行目\n二行目\n:::\n\n:::details The diff\n```diff\n+x\n```\n:::\n| a / b |\n"
	got := tableBreaks(detailsToZenn(messagesFromQuotes(in)))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

func TestTablesToText(t *testing.T) {
	in := "| name | what |\n|---|---|\n| [a](x.md) | `one` |\n| long name | two |\n"
	want := "```text\nname       what\n---------  ----\na          one\nlong name  two\n```\n"
	if diff := cmp.Diff(want, tablesToText(in)); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

// series returns the posts of the repository, rendered as verifydocs
// renders them, in one language: "" for English, docsgen.JaDir for
// Japanese.
func series(t *testing.T, dir string) (string, []Page) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	chapters, err := docsgen.ChapterDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	names, _, err := docsgen.Posts(root, chapters)
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		dir = "docs"
	}
	var pages []Page
	for _, n := range names {
		rel := dir + "/" + n
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		out, err := docsgen.Render(root, filepath.Dir(filepath.Join(root, rel)), data)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		pages = append(pages, Page{Path: rel, Markdown: string(out)})
	}
	return root, pages
}

// TestZennBookOfTheSeries builds the book of the Japanese posts and
// checks it against Zenn's rules, without a browser: what make test can
// say of the book on any machine. TestPublish renders it with Zenn's
// renderer too.
func TestZennBookOfTheSeries(t *testing.T) {
	root, pages := series(t, docsgen.JaDir)
	o := Options{Root: root, RepoURL: "https://github.com/example/minisched", Commit: "v0.0.0", ZennUser: "example", BookSlug: "minisched-kube-scheduler"}
	book, err := ZennBook(o, pages, BookConfig{Title: "minisched", Summary: "kube-scheduler", Topics: []string{"kubernetes", "go"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range CheckZenn(book, o.BookSlug) {
		t.Error(p)
	}
	if len(book.Chapters) != len(pages) {
		t.Errorf("%d chapters for %d posts", len(book.Chapters), len(pages))
	}
	for _, im := range book.Images {
		if _, err := os.Stat(filepath.Join(root, im.Source)); err != nil {
			t.Errorf("picture %s: %v", im.Source, err)
		}
	}
	// A link to another post goes to its chapter on Zenn.
	if data := string(book.Files["books/"+o.BookSlug+"/02-filter.md"]); !strings.Contains(data, "https://zenn.dev/example/books/minisched-kube-scheduler/viewer/") {
		t.Error("02-filter links no other chapter by its viewer URL")
	}
}

// TestMediumPagesOfTheSeries makes every English post a Medium page, with
// stand-in pictures, and checks that Medium would lose nothing of it.
func TestMediumPagesOfTheSeries(t *testing.T) {
	root, pages := series(t, "")
	o := Options{Root: root, RepoURL: "https://github.com/example/minisched", Commit: "v0.0.0"}
	for _, p := range pages {
		m, err := Medium(o, p)
		if err != nil {
			t.Fatal(err)
		}
		html, err := m.HTML(func(string) ([]byte, error) { return []byte("\x89PNG\r\n\x1a\n stand-in picture"), nil })
		if err != nil {
			t.Fatal(err)
		}
		for _, problem := range CheckMedium(m.Slug, html) {
			t.Error(problem)
		}
		if strings.Contains(m.Markdown, "```mermaid") {
			t.Errorf("%s: Mermaid left in", m.Slug)
		}
	}
}

// TestCheckMedium: each thing Medium would lose is reported.
func TestCheckMedium(t *testing.T) {
	page := `<pre><code class="language-mermaid">flowchart</code></pre><table></table><img src="x.png"><a href="../x.md">x</a><a href="https://ok">ok</a>`
	got := CheckMedium("p", []byte(page))
	want := []string{
		"p: a diagram is left as Mermaid source",
		"p: a table, which Medium does not have",
		`p: a picture that is not in the page: src="x.png"`,
		`p: a relative link: href="../x.md"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

// TestZennBookDrawsLongDiagrams: a Mermaid block over Zenn's limits
// becomes a picture of the book, one within them stays a diagram, and a
// link to another post goes to its chapter on Zenn.
func TestZennBookDrawsLongDiagrams(t *testing.T) {
	long := "```mermaid\nflowchart LR\n" + strings.Repeat("  a --> b\n", 250) + "```\n"
	short := "```mermaid\nflowchart LR\n  a --> b\n```\n"
	page := "---\nenglish: docs/p.md\nsynced: x\n---\n# タイトル\n\n## ステップ1: 書く\n\n" + short + "\n" + long + "\n[次](q.md#ステップ1-書く)\n"
	next := "---\nenglish: docs/q.md\nsynced: x\n---\n# 次\n\n## ステップ1: 書く\n"
	o := Options{Root: t.TempDir(), RepoURL: "https://github.com/example/minisched", Commit: "v0", ZennUser: "me", BookSlug: "minisched-kube-scheduler"}
	book, err := ZennBook(o, []Page{{Path: "docs/ja/p.md", Markdown: page}, {Path: "docs/ja/q.md", Markdown: next}}, BookConfig{Title: "t", Summary: "s", Topics: []string{"go"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"p-diagram-2.png"}, func() []string {
		var names []string
		for _, d := range book.Diagrams {
			names = append(names, d.Name)
		}
		return names
	}()); diff != "" {
		t.Errorf("diagrams to draw (-want, +got):\n%s", diff)
	}
	got := string(book.Files["books/minisched-kube-scheduler/p.md"])
	for _, want := range []string{
		"---\ntitle: \"タイトル\"\n---\n",
		short,
		"![](/images/minisched-kube-scheduler/p-diagram-2.png)",
		"[次](https://zenn.dev/me/books/minisched-kube-scheduler/viewer/q#" + zennID("ステップ1: 書く") + ")",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the chapter lacks %q:\n%s", want, got)
		}
	}
	for _, p := range CheckZenn(book, o.BookSlug) {
		t.Error(p)
	}
}
