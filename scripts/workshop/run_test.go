package workshop

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGoTest runs go test on a small module and reads what it said: the
// proof and the learner's table stand on this.
func TestGoTest(t *testing.T) {
	dir := t.TempDir()
	// A small module, kept under testdata with a .txt ending so that go
	// test does not run its tests as ours: one passes, one fails in a
	// subtest, one skips (what the table must not count as a pass), and
	// one package does not compile.
	files := map[string]string{
		"go.mod":      "go.mod.txt",
		"m.go":        "m.go.txt",
		"m_test.go":   "m_test.go.txt",
		"broken/b.go": "broken/b.go.txt",
	}
	for name, src := range files {
		content, err := os.ReadFile(filepath.Join("testdata", "gotest", src))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type got struct {
		Passed, FailedByTest, BuildFailed bool
		Summary                           string
	}
	tests := []struct {
		run  TestRun
		want got
	}{
		{TestRun{Pkg: "./", Run: "^TestPass$"}, got{Passed: true, Summary: "1 test(s) passed"}},
		{TestRun{Pkg: "./", Run: "^TestFail$"}, got{FailedByTest: true, Summary: "TestFail/case: m_test.go:8: Two() = 2, want 3"}},
		{TestRun{Pkg: "./", Run: "^TestSkip$"}, got{Summary: "1 test(s) skipped"}},
		{TestRun{Pkg: "./", Run: "^TestNone$"}, got{Summary: "no test matches -run '^TestNone$'"}},
	}
	for _, tc := range tests {
		t.Run(tc.run.Run, func(t *testing.T) {
			res := GoTest(context.Background(), dir, tc.run, time.Minute)
			g := got{Passed: res.Passed(), FailedByTest: res.FailedByTest(), BuildFailed: res.BuildFailed, Summary: res.Summary()}
			if d := cmp.Diff(tc.want, g); d != "" {
				t.Errorf("(-want, +got):\n%s", d)
			}
		})
	}
	res := GoTest(context.Background(), dir, TestRun{Pkg: "./broken", Run: "."}, time.Minute)
	if !res.BuildFailed || res.FailedByTest() || res.Passed() {
		t.Errorf("a package that does not compile: BuildFailed %v, FailedByTest %v, Passed %v (%s)", res.BuildFailed, res.FailedByTest(), res.Passed(), res.Summary())
	}
}

func TestMissingTests(t *testing.T) {
	dir := t.TempDir()
	src := "package m\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\nfunc TestB(t *testing.T) {}\n"
	if err := os.WriteFile(filepath.Join(dir, "m_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		run  string
		want []string
	}{
		{run: "^TestA$"},
		{run: "^(TestA|TestB)$"},
		{run: "^(TestA|TestGone)$", want: []string{"TestGone"}},
		{run: "^TestGone$/case", want: []string{"TestGone"}},
		{run: "^TestA$/(x|y)$"},
		{run: "InFlight|Worth"}, // not spelled out: nothing to check by name
	}
	for _, tc := range tests {
		got, err := MissingTests(dir, tc.run)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("MissingTests(%q) (-want, +got):\n%s", tc.run, d)
		}
	}
}
