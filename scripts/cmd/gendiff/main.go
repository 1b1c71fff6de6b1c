// Command gendiff writes docs/diffs/<chapter>.diff for every chapter after
// the first: the change from the previous chapter's folder, go.sum left out
// and module paths replaced by a placeholder (see docsgen.Diff). With -check
// it writes nothing and fails if a committed diff is stale or missing.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"minisched/scripts/docsgen"
)

func main() {
	root := flag.String("root", ".", "repository root")
	check := flag.Bool("check", false, "fail on stale diffs instead of writing them")
	flag.Parse()
	chapters, err := docsgen.ChapterDirs(*root)
	if err != nil {
		fail(err)
	}
	dir := filepath.Join(*root, "docs", "diffs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	want := map[string]bool{}
	var stale []string
	for i := 1; i < len(chapters); i++ {
		diff, err := docsgen.Diff(*root, chapters[i-1], chapters[i])
		if err != nil {
			fail(err)
		}
		path := filepath.Join(dir, chapters[i]+".diff")
		want[filepath.Base(path)] = true
		have, _ := os.ReadFile(path)
		if bytes.Equal(have, diff) {
			continue
		}
		if *check {
			stale = append(stale, path)
			continue
		}
		if err := os.WriteFile(path, diff, 0o644); err != nil {
			fail(err)
		}
		fmt.Println("wrote", path)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".diff") && !want[e.Name()] {
			stale = append(stale, filepath.Join(dir, e.Name())+" (no such chapter pair)")
		}
	}
	if len(stale) > 0 {
		fail(fmt.Errorf("stale generated diffs (run `make diffs`): %s", strings.Join(stale, ", ")))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gendiff: "+err.Error())
	os.Exit(1)
}
