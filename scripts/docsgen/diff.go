// Package docsgen generates and checks the deterministic parts of the docs:
// the chapter diffs, the code snippets and diff summaries embedded in the
// pages, the embedded outputs of real runs, relative links and spelling.
package docsgen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ChapterDirs lists the chapter folders under root, in order.
func ChapterDirs(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`^(0[1-9]|1[0-9])-[a-z-]+$`)
	var out []string
	for _, e := range entries {
		if e.IsDir() && re.MatchString(e.Name()) {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "go.mod")); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// ModulePlaceholder stands for a chapter's module path in generated diffs,
// so that import lines do not show up as changes.
const ModulePlaceholder = "minisched/CHAPTER"

// notACopy are the chapters that are not a copy of the one before:
// chapter 13 is kube-scheduler itself with plugins of its own, and deletes
// every file of chapter 12's scheduler.
var notACopy = map[string]bool{"13-kube-scheduler-plugins": true}

// Diff returns the unified diff from chapter prev to chapter next, as
// docs/diffs/<next>.diff holds it: go.sum left out, each chapter's module
// path replaced by ModulePlaceholder.
func Diff(root, prev, next string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "minisched-diff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, ch := range []string{prev, next} {
		if err := copyNormalized(filepath.Join(root, ch), filepath.Join(tmp, ch), "minisched/"+ch); err != nil {
			return nil, err
		}
	}
	args := []string{"-c", "core.quotepath=off", "-c", "diff.noprefix=false",
		"diff", "--no-index", "--no-color", "--no-ext-diff", "--find-renames", "--src-prefix=", "--dst-prefix="}
	if notACopy[next] {
		// Only the deleted files' names: the chapter replaces the
		// previous one's scheduler, and its diff shows what it adds.
		args = append(args, "--irreversible-delete")
	}
	cmd := exec.Command("git", append(args, prev, next)...)
	cmd.Dir = tmp
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	// git diff exits 1 when the trees differ.
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("git diff %s %s: %v: %s", prev, next, err, stderr.String())
	}
	// The blob hashes on "index" lines change with every edit anywhere in a
	// file; they say nothing to a reader.
	index := regexp.MustCompile(`(?m)^index [0-9a-f]+\.\.[0-9a-f]+( [0-7]+)?\n`)
	return index.ReplaceAll(out.Bytes(), nil), nil
}

// copyNormalized copies a chapter's tracked-looking files (no go.sum, no
// build outputs) with its module path replaced.
func copyNormalized(src, dst, module string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if d.Name() == "go.sum" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		data = bytes.ReplaceAll(data, []byte(module), []byte(ModulePlaceholder))
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

// DiffStat summarizes a diff: one line per file with lines added and removed.
type DiffStat struct {
	File           string
	Added, Removed int
}

// Stat reads the per-file counts of a diff made by Diff.
func Stat(diff []byte) []DiffStat {
	var out []DiffStat
	var cur *DiffStat
	header := regexp.MustCompile(`^diff --git (\S+) (\S+)$`)
	for _, line := range strings.Split(string(diff), "\n") {
		if m := header.FindStringSubmatch(line); m != nil {
			_, file, _ := strings.Cut(m[2], "/")
			out = append(out, DiffStat{File: file})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil || strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---") {
			continue
		}
		switch {
		case strings.HasPrefix(line, "+"):
			cur.Added++
		case strings.HasPrefix(line, "-"):
			cur.Removed++
		}
	}
	return out
}

// WithoutTests returns a diff made by Diff without the sections of test
// files (_test.go): what a chapter changes in the scheduler itself.
func WithoutTests(diff []byte) []byte {
	var b strings.Builder
	keep := true
	for _, line := range strings.SplitAfter(string(diff), "\n") {
		if strings.HasPrefix(line, "diff --git ") {
			fields := strings.Fields(line)
			keep = !strings.HasSuffix(fields[len(fields)-1], "_test.go")
		}
		if keep {
			b.WriteString(line)
		}
	}
	return []byte(b.String())
}
