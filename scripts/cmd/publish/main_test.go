package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"minisched/scripts/publish"
	"minisched/scripts/watch"
)

// TestPublish runs make publish's whole path on the repository's posts:
// the Zenn book drawn and rendered by Zenn's own renderer and checked by
// zenn-model, the Medium pages with their diagrams drawn by mermaid-cli,
// and a screenshot of every page in Debian's Chromium (its first screen;
// make publish takes whole pages), the Zenn chapters with their diagrams
// drawn by mermaid, as Zenn's embed server draws them. It needs Node.js
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
	// The first screen of each page: make publish takes whole pages, and
	// the checks run on whole pages either way.
	res, err := Publish(o, all, out, filepath.Join(root, ".cache", "publish-tools"), chromium, true)
	if err != nil {
		t.Fatal(err)
	}
	pngMagic := []byte("\x89PNG\r\n\x1a\n")
	// Zenn shows a book's cover at 500 by 700 and takes 1 MB at most.
	cover, err := os.ReadFile(filepath.Join(out, "zenn", "books", o.BookSlug, "cover.png"))
	if err != nil || !bytes.HasPrefix(cover, pngMagic) || len(cover) > 1<<20 {
		t.Errorf("the book's cover is not a PNG under 1 MB (%v, %d bytes)", err, len(cover))
	} else if w, h := binary.BigEndian.Uint32(cover[16:]), binary.BigEndian.Uint32(cover[20:]); w != 500 || h != 700 {
		t.Errorf("the book's cover is %dx%d, want 500x700", w, h)
	}
	for _, ch := range res.Book.Chapters {
		page, err := os.ReadFile(filepath.Join(out, "zenn-html", ch+".html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), `class="znc"`) || strings.Contains(string(page), "data-body-error") {
			t.Errorf("%s: Zenn's rendering is not a clean chapter", ch)
		}
		shot, err := os.ReadFile(filepath.Join(out, "screenshots", "zenn-"+ch+".png"))
		if err != nil || !bytes.HasPrefix(shot, pngMagic) || len(shot) < 10000 {
			t.Errorf("%s: no screenshot of its chapter (%v, %d bytes)", ch, err, len(shot))
		}
	}
	for _, im := range res.Book.Images {
		data, err := os.ReadFile(filepath.Join(out, "zenn", im.Target))
		if err != nil || !bytes.HasPrefix(data, pngMagic) {
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
		if err != nil || !bytes.HasPrefix(shot, pngMagic) || len(shot) < 10000 {
			t.Errorf("%s: no screenshot (%v, %d bytes)", slug, err, len(shot))
		}
	}
	// The screenshots are a check only if what a reader would see broken
	// stops them: a diagram mermaid refuses, a picture that is not there.
	t.Run("a broken diagram or picture fails its chapter", func(t *testing.T) {
		// Zenn takes a slug of 12 to 50 characters.
		book := filepath.Join(t.TempDir(), "books", "broken-chapters")
		files := map[string]string{
			"config.yaml":   "title: \"broken\"\nsummary: \"chapters a reader would see broken\"\ntopics: [\"go\"]\npublished: false\nprice: 0\nchapters:\n  - 01-diagram\n  - 02-picture\n",
			"01-diagram.md": "---\ntitle: \"diagram\"\n---\n\n```mermaid\nflowchart LR\n    a -- \"b\" --> \n```\n",
			"02-picture.md": "---\ntitle: \"picture\"\n---\n\n![none](/images/broken/none.png)\n",
		}
		for name, text := range files {
			if err := write(filepath.Join(book, name), []byte(text)); err != nil {
				t.Fatal(err)
			}
		}
		pages, err := renderZenn(filepath.Join(root, ".cache", "publish-tools"), book, filepath.Join(t.TempDir(), "html"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel, err := watch.Browser(chromium)
		if err != nil {
			t.Fatal(err)
		}
		defer cancel()
		var got []string
		for _, page := range pages {
			err := screenshot(ctx, page, filepath.Join(t.TempDir(), "shot.png"), true, true)
			got = append(got, fmt.Sprint(err != nil && strings.Contains(err.Error(), "a diagram does not draw"), err != nil && strings.Contains(err.Error(), "pictures that do not load") && strings.Contains(err.Error(), "/images/broken/none.png")))
			t.Log(err)
		}
		if diff := cmp.Diff([]string{"true false", "false true"}, got); diff != "" {
			t.Errorf("screenshots of a chapter with a broken diagram, then one with a missing picture: (diagram refused, picture missing) (-want +got):\n%s", diff)
		}
	})
	// One mermaid-cli run draws the diagrams in order into numbered files:
	// each must land where its page wants it, and one that holds a fence
	// of mermaid-cli's Markdown is drawn on its own.
	t.Run("each diagram lands in its own file", func(t *testing.T) {
		dir := t.TempDir()
		chain := func(dir string, n int, extra string) string {
			src := "flowchart " + dir + "\n"
			for i := 1; i < n; i++ {
				src += fmt.Sprintf("    n%d --> n%d\n", i-1, i)
			}
			return src + extra
		}
		all := []drawing{
			{chain("TB", 6, ""), filepath.Join(dir, "tall.png")},
			{chain("TB", 6, "    n0:::big\n    classDef big fill:#fde68a\n"), filepath.Join(dir, "fenced-tall.png")},
			{chain("LR", 6, ""), filepath.Join(dir, "wide.png")},
		}
		if err := diagrams(filepath.Join(root, ".cache", "publish-tools"), chromium, all); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range all {
			f, err := os.Open(d.out)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", d.out, err)
			}
			shape := "wide"
			if cfg.Height > cfg.Width {
				shape = "tall"
			}
			got = append(got, filepath.Base(d.out)+" "+shape)
		}
		if diff := cmp.Diff([]string{"tall.png tall", "fenced-tall.png tall", "wide.png wide"}, got); diff != "" {
			t.Errorf("diagrams drawn (-want +got):\n%s", diff)
		}
	})
}
