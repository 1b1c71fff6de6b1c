// Package workshop turns a chapter into a workshop: a working copy in
// which the functions that carry the chapter's concept are stubs, a check
// that runs a part's tests and scenarios against that copy, and a proof, run
// by make test, that every part's and every exercise's check fails on its
// starting point and passes on the finished chapter.
//
// The stubs are generated from `//workshop:part NN/K` lines in the chapter's
// own source (see FORMAT.md), so there is no second copy of the chapter to
// keep in step. The parts, their tests and the exercises are data, in
// chapters/NN-name.yaml.
package workshop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Spec is one chapter's workshop: chapters/NN-name.yaml.
type Spec struct {
	// Chapter is the folder, "06-scheduling-queue"; Number is 6. Both
	// come from the file name.
	Chapter   string     `json:"-"`
	Number    int        `json:"-"`
	Parts     []Part     `json:"parts"`
	Exercises []Exercise `json:"exercises"`
}

// Part is code the learner writes: the functions marked for it are stubs
// until then.
type Part struct {
	Title string `json:"title"`
	// Doc is the page section that explains the part, "docs/06-....md#anchor".
	Doc string `json:"doc"`
	// Upstream lists the k8s.io/kubernetes files the part mirrors.
	Upstream []string `json:"upstream"`
	// Counterparts names upstream's function where it differs from the
	// chapter's (flushUnschedulablePodsLeftover: flushUnschedulableEntitiesLeftover).
	Counterparts map[string]string `json:"counterparts"`
	Difficulty   string            `json:"difficulty"`
	// Minutes is an estimate for a newcomer, by a rule written down in
	// docs/workshop.md#how-long-the-parts-take: a base by difficulty plus
	// half a minute per line of the finished functions.
	Minutes     int       `json:"minutes"`
	Unit        []TestRun `json:"unit"`
	Integration []TestRun `json:"integration"`
	Scenarios   []string  `json:"scenarios"`
}

// Exercise is a change to the finished chapter. A "break" exercise breaks
// it on purpose and its tests must then fail; an "extend" exercise adds
// something new, with a given test that fails until the learner's code (the
// solution here) makes it pass.
type Exercise struct {
	Title     string            `json:"title"`
	Kind      string            `json:"kind"`
	Edits     []Edit            `json:"edits"`
	Files     map[string]string `json:"files"`
	Solution  *Solution         `json:"solution"`
	Unit      []TestRun         `json:"unit"`
	Scenarios []string          `json:"scenarios"`
}

// Solution is what makes an extend exercise's test pass.
type Solution struct {
	Files map[string]string `json:"files"`
	Edits []Edit            `json:"edits"`
}

// Edit replaces the one occurrence of Old in File by New.
type Edit struct {
	File string `json:"file"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// TestRun is `go test -run Run Pkg` in the chapter's folder.
type TestRun struct {
	Pkg string `json:"pkg"`
	Run string `json:"run"`
}

func (t TestRun) String() string { return fmt.Sprintf("%s -run '%s'", t.Pkg, t.Run) }

var specName = regexp.MustCompile(`^((0[1-9]|1[0-9])-[a-z-]+)\.yaml$`)

// LoadSpecs reads every chapters/*.yaml under dir (scripts/workshop).
func LoadSpecs(dir string) ([]*Spec, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "chapters"))
	if err != nil {
		return nil, err
	}
	var out []*Spec
	for _, e := range entries {
		m := specName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		s, err := LoadSpec(filepath.Join(dir, "chapters", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// LoadSpec reads one chapters/NN-name.yaml and checks it.
func LoadSpec(path string) (*Spec, error) {
	m := specName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return nil, fmt.Errorf("%s: want a name like 06-scheduling-queue.yaml", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &Spec{Chapter: m[1]}
	s.Number, _ = strconv.Atoi(m[2])
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (s *Spec) validate() error {
	if n := len(s.Parts); n < 2 || n > 5 {
		return fmt.Errorf("%d parts, want 2 to 5", n)
	}
	for i, p := range s.Parts {
		where := fmt.Sprintf("part %d", i+1)
		if p.Title == "" || p.Doc == "" || len(p.Upstream) == 0 {
			return fmt.Errorf("%s: title, doc and upstream are required", where)
		}
		switch p.Difficulty {
		case "easy", "medium", "hard":
		default:
			return fmt.Errorf("%s: difficulty %q, want easy, medium or hard", where, p.Difficulty)
		}
		if len(p.Unit) == 0 {
			return fmt.Errorf("%s: no unit tests: the proof needs a check that can fail", where)
		}
		// Integration tests and scenarios run the whole scheduler: they can
		// pass only once every part is written.
		if i < len(s.Parts)-1 && (len(p.Integration) > 0 || len(p.Scenarios) > 0) {
			return fmt.Errorf("%s: integration tests and scenarios belong to the last part, which they need every part for", where)
		}
		if err := validRuns(append(append([]TestRun{}, p.Unit...), p.Integration...)); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	for i, e := range s.Exercises {
		where := fmt.Sprintf("exercise %d (%s)", i+1, e.Title)
		if e.Title == "" || len(e.Unit) == 0 {
			return fmt.Errorf("%s: title and unit tests are required", where)
		}
		switch e.Kind {
		case "break":
			if len(e.Edits) == 0 || e.Solution != nil || len(e.Files) > 0 {
				return fmt.Errorf("%s: a break exercise has edits only", where)
			}
		case "extend":
			if len(e.Files) == 0 || e.Solution == nil {
				return fmt.Errorf("%s: an extend exercise has the given test files and a solution", where)
			}
		default:
			return fmt.Errorf("%s: kind %q, want break or extend", where, e.Kind)
		}
		if err := validRuns(e.Unit); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

func validRuns(runs []TestRun) error {
	for _, r := range runs {
		if !strings.HasPrefix(r.Pkg, "./") || r.Run == "" {
			return fmt.Errorf("test %q: want pkg ./path and a -run pattern", r)
		}
		if _, err := regexp.Compile(r.Run); err != nil {
			return fmt.Errorf("test %q: %w", r, err)
		}
	}
	return nil
}

// ApplyEdits applies edits to the files under dir. Each Old must occur
// exactly once, so an edit that no longer matches the chapter fails loudly
// instead of changing nothing.
func ApplyEdits(dir string, edits []Edit) error {
	for _, e := range edits {
		path := filepath.Join(dir, e.File)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(data), e.Old); n != 1 {
			return fmt.Errorf("edit of %s: the old text occurs %d times, want once:\n%s", e.File, n, e.Old)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), e.Old, e.New, 1)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// CopyFiles copies files (destination in the chapter -> source under
// testdataDir) into dir.
func CopyFiles(dir, testdataDir string, files map[string]string) error {
	for dst, src := range files {
		data, err := os.ReadFile(filepath.Join(testdataDir, src))
		if err != nil {
			return err
		}
		path := filepath.Join(dir, dst)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
