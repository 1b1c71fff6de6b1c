package docsgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeFiles writes files under a temporary root and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestProseHash: the prose and the marker lines count, the generated
// bodies do not.
func TestProseHash(t *testing.T) {
	base := "# Title\nSome prose.\n<!-- snippet: a.go F -->\n```go\nfunc F() {}\n```\n<!-- /snippet -->\n"
	tests := []struct {
		name string
		page string
		same bool
	}{
		{name: "regenerated code", page: strings.Replace(base, "func F() {}", "func F() { return }", 1), same: true},
		{name: "a word of prose", page: strings.Replace(base, "Some prose.", "Some more prose.", 1)},
		{name: "another range", page: strings.Replace(base, "a.go F -->", "a.go F 1-2 -->", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProseHash([]byte(tt.page)) == ProseHash([]byte(base)); got != tt.same {
				t.Errorf("same hash = %v, want %v", got, tt.same)
			}
		})
	}
}

func TestFrontMatter(t *testing.T) {
	page := []byte("---\nenglish: docs/01-initial.md\nsynced: sha256:old\n---\n# タイトル\n")
	fm, body, err := ParseFrontMatter(page)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(FrontMatter{English: "docs/01-initial.md", Synced: "sha256:old"}, fm); diff != "" {
		t.Errorf("front matter (-want, +got):\n%s", diff)
	}
	if string(body) != "# タイトル\n" {
		t.Errorf("body %q", body)
	}
	out, err := SetSynced(page, "sha256:new")
	if err != nil {
		t.Fatal(err)
	}
	if want := "---\nenglish: docs/01-initial.md\nsynced: sha256:new\n---\n# タイトル\n"; string(out) != want {
		t.Errorf("SetSynced:\n%s\nwant:\n%s", out, want)
	}
	if _, _, err := ParseFrontMatter([]byte("# no front matter\n")); err == nil {
		t.Error("a page without front matter was taken")
	}
}

// TestCheckJa: a page in step passes; a stale one, one with a heading
// too few and one whose blocks differ each fail with one line that says
// so.
func TestCheckJa(t *testing.T) {
	english := "# Title\n## Step 1: do it\nProse.\n<!-- output: data/run.txt -->\n<!-- /output -->\n## What you learned\n"
	good := "---\nenglish: docs/p.md\nsynced: " + ProseHash([]byte(english)) + "\n---\n# タイトル\n## ステップ1: やる\n本文。\n<!-- output: ../data/run.txt -->\n<!-- /output -->\n## この記事で学んだこと\n"
	tests := []struct {
		name    string
		english string
		ja      string
		want    []string
	}{
		{name: "in step", english: english, ja: good},
		{
			name:    "the English prose changed",
			english: strings.Replace(english, "Prose.", "New prose.", 1),
			ja:      good,
			want:    []string{"docs/p.md changed since this page was last brought in step"},
		},
		{
			name:    "a heading too few",
			english: english,
			ja:      strings.Replace(good, "## この記事で学んだこと\n", "", 1),
			want:    []string{"2 headings, but docs/p.md has 3"},
		},
		{
			name:    "another block",
			english: english,
			ja:      strings.Replace(good, "../data/run.txt", "../data/other.txt", 1),
			want:    []string{`"output: docs/data/other.txt" where the English page has "output: docs/data/run.txt"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeFiles(t, map[string]string{"docs/p.md": tt.english, "docs/ja/p.md": tt.ja})
			path := filepath.Join(root, "docs/ja/p.md")
			got := CheckJa(root, path, []byte(tt.ja))
			if len(got) != len(tt.want) {
				t.Fatalf("problems %q, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %q, want one with %q", got[i], w)
				}
			}
		})
	}
}

// TestMapJaAnchors: a link that names the English anchor of a section of
// another Japanese page gets the Japanese heading at the same position;
// links already right, and links to English pages, stay.
func TestMapJaAnchors(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"docs/b.md":    "# B\n## Step 1: first\n## Step 2: second\n",
		"docs/ja/b.md": "---\nenglish: docs/b.md\nsynced: x\n---\n# B\n## ステップ1: 最初\n## ステップ2: 次\n",
	})
	page := "[a](b.md#step-2-second) [b](b.md#ステップ1-最初) [c](../b.md#step-2-second) [d](b.md#nope)\n"
	want := "[a](b.md#ステップ2-次) [b](b.md#ステップ1-最初) [c](../b.md#step-2-second) [d](b.md#nope)\n"
	got := MapJaAnchors(root, filepath.Join(root, "docs/ja/a.md"), []byte(page))
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}
