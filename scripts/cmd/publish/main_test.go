package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minisched/scripts/publish"
	"minisched/scripts/watch"
)

// TestPublish runs make publish's whole path on the repository's posts:
// the Zenn book drawn and rendered by Zenn's own renderer and checked by
// zenn-model, the Medium pages with their diagrams drawn by mermaid-cli,
// and a screenshot of every page in Debian's Chromium. It needs Node.js
// (npm) and Chromium; make test leaves it out without them, with one line
// that says so, except under CI.
func TestPublish(t *testing.T) {
	chromium, err := watch.Chromium()
	if err != nil {
		t.Fatal("Chromium is missing: sudo apt-get install chromium")
	}
	if err := japaneseFont(); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	o := publish.Options{Root: root, RepoURL: "https://github.com/example/minisched", Commit: "v0.0.0", ZennUser: "example", BookSlug: "minisched-kube-scheduler"}
	all, err := posts(root)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := Publish(o, all, out, filepath.Join(root, ".cache", "publish-tools"), chromium)
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\n")
	for _, ch := range res.Book.Chapters {
		page, err := os.ReadFile(filepath.Join(out, "zenn-html", ch+".html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), `class="znc"`) || strings.Contains(string(page), "data-body-error") {
			t.Errorf("%s: Zenn's rendering is not a clean chapter", ch)
		}
		shot, err := os.ReadFile(filepath.Join(out, "screenshots", "zenn-"+ch+".png"))
		if err != nil || !bytes.HasPrefix(shot, png) || len(shot) < 10000 {
			t.Errorf("%s: no screenshot of its chapter (%v, %d bytes)", ch, err, len(shot))
		}
	}
	for _, im := range res.Book.Images {
		data, err := os.ReadFile(filepath.Join(out, "zenn", im.Target))
		if err != nil || !bytes.HasPrefix(data, png) {
			t.Errorf("picture %s is not a PNG in the book (%v)", im.Target, err)
		}
	}
	if len(res.Medium) != len(all) {
		t.Errorf("%d Medium pages for %d posts", len(res.Medium), len(all))
	}
	for _, page := range res.Medium {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range publish.CheckMedium(filepath.Base(page), data) {
			t.Error(p)
		}
		slug := strings.TrimSuffix(filepath.Base(page), ".html")
		shot, err := os.ReadFile(filepath.Join(out, "screenshots", "medium-"+slug+".png"))
		if err != nil || !bytes.HasPrefix(shot, png) || len(shot) < 10000 {
			t.Errorf("%s: no screenshot (%v, %d bytes)", slug, err, len(shot))
		}
	}
}
