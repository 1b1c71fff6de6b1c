package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Chapter is one numbered folder of the repository.
type Chapter struct {
	Number int    // 1
	Dir    string // "01-initial"
}

var chapterDir = regexp.MustCompile(`^(0[1-9]|1[0-9])-[a-z-]+$`)

// FindChapters lists the chapter folders under root that hold a go.mod.
func FindChapters(root string) ([]Chapter, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []Chapter
	for _, e := range entries {
		m := chapterDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, e.Name(), "go.mod")); err != nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		out = append(out, Chapter{Number: n, Dir: e.Name()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// DirWidth is the width of a table column of chapter folders: the
// longest of chapters' folder names, and at least min.
func DirWidth(chapters []Chapter, min int) int {
	w := min
	for _, c := range chapters {
		w = max(w, len(c.Dir))
	}
	return w
}

// SelectChapters picks chapters by number ("01,03", "1", or "" for all).
func SelectChapters(all []Chapter, spec string) ([]Chapter, error) {
	if strings.TrimSpace(spec) == "" {
		return all, nil
	}
	var out []Chapter
	for _, s := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("chapter %q is not a number", s)
		}
		found := false
		for _, c := range all {
			if c.Number == n {
				out = append(out, c)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("there is no chapter %02d", n)
		}
	}
	return out, nil
}

// BuildChapter builds a chapter's scheduler with the race detector into
// binDir and returns the binary's path.
func BuildChapter(root string, c Chapter, binDir string) (string, error) {
	return BuildChapterWith(root, c, binDir, true)
}

// BuildChapterWith builds a chapter's scheduler, with the race detector or
// without it (the benchmark measures speed, and -race costs several times),
// and links it into binDir. The build itself goes to a fixed path under
// root's .cache/bin: go build relinks a binary only when its build ID no
// longer matches the sources, so the stages of make test (e2e, compare,
// chaos, bench) share one link per chapter instead of one each, and a warm
// run relinks nothing that did not change.
func BuildChapterWith(root string, c Chapter, binDir string, race bool) (string, error) {
	kind := "norace"
	if race {
		kind = "race"
	}
	built, err := filepath.Abs(filepath.Join(root, ".cache", "bin", kind, c.Dir))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(built), 0o755); err != nil {
		return "", err
	}
	args := []string{"build", "-o", built}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	// The chapter as its own module, as its tests build it (their
	// command tests build the same file).
	cmd.Dir = filepath.Join(root, c.Dir)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", c.Dir, err, out)
	}
	// The run's own name for it: a later build replaces the cached file
	// with a new one (a new inode), so this link keeps the binary the run
	// started with.
	bin, err := filepath.Abs(filepath.Join(binDir, c.Dir))
	if err != nil {
		return "", err
	}
	_ = os.Remove(bin)
	if err := os.Link(built, bin); err != nil {
		return built, nil
	}
	return bin, nil
}
