package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		pkgs []string
		want [][]string
	}{
		{"no package", nil, nil},
		{"distinct names share one group", []string{"m/a", "m/b", "m/c/d"}, [][]string{{"m/a", "m/b", "m/c/d"}}},
		{"a second package of a name goes to the next group", []string{"m/cache", "m/x/cache", "m/queue", "m/y/cache"},
			[][]string{{"m/cache", "m/queue"}, {"m/x/cache"}, {"m/y/cache"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []pkg
			for _, p := range tc.pkgs {
				in = append(in, pkg{importPath: p})
			}
			var got [][]string
			for _, g := range groups(in) {
				var names []string
				for _, p := range g {
					names = append(names, p.importPath)
				}
				got = append(got, names)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTestBinaryName(t *testing.T) {
	for _, tc := range []struct{ importPath, want string }{
		{"minisched/scheduler/backend/queue", "queue.test"},
		{"minisched", "minisched.test"},
		{"example.com/cmd/v2", "cmd.test"},
		{"example.com/cmd/v1", "v1.test"},
		{"example.com/cmd/v0", "v0.test"},
		{"v2", "v2.test"},
		{"example.com/cmd/v2x", "v2x.test"},
	} {
		if diff := cmp.Diff(tc.want, testBinaryName(tc.importPath)); diff != "" {
			t.Errorf("testBinaryName(%q) (-want +got):\n%s", tc.importPath, diff)
		}
	}
}

func TestTestEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"GOROOT/bin goes first in PATH", []string{"HOME=/root", "PATH=/usr/bin:/bin"}, []string{"HOME=/root", "PATH=/go/bin:/usr/bin:/bin"}},
		{"no PATH: GOROOT/bin alone", []string{"HOME=/root"}, []string{"HOME=/root", "PATH=/go/bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, testEnv(tc.env, "/go/bin")); diff != "" {
				t.Errorf("testEnv (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRun runs gotest on a small module three times: the results must be
// go test's, the second run must link nothing, and after an edit only the
// edited package's binary may be linked again.
func TestRun(t *testing.T) {
	t.Setenv("GOWORK", "off")
	mod := t.TempDir()
	files := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.24\n",
		"a/a.go":        "package a\n\nfunc A() int { return 1 }\n",
		"a/a_test.go":   "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 1 {\n\t\tt.Fatal(\"A\")\n\t}\n}\n",
		"b/a/a_test.go": "package a\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n// It runs in its package's directory, as under go test.\nfunc TestHere(t *testing.T) {\n\tif _, err := os.Stat(\"a_test.go\"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
		"c/c_test.go":   "package c\n\nimport \"testing\"\n\nfunc TestFails(t *testing.T) { t.Fatal(\"the message\") }\n\nfunc TestSkipped(t *testing.T) { t.Fatal(\"-skip did not skip\") }\n",
		"d/d.go":        "package d\n",
		"e/e_test.go":   "package e\n\nimport \"testing\"\n\nfunc TestE(t *testing.T) { undefined() }\n",
		"f/f_test.go":   "package f\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {}\n",
	}
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		write(name, text)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	times := regexp.MustCompile(`\t[0-9.]+s\n`)
	gotest := func() (string, error) {
		t.Helper()
		var out bytes.Buffer
		err := run(context.Background(), []string{"-C", mod, "-bin", bin, "-skip", "^TestSkipped$"}, &out)
		return times.ReplaceAllString(out.String(), "\tTIMEs\n"), err
	}
	// What each package's binary is, by file identity: a link writes a
	// new file and renames it over the old one. (The go command sets the
	// modification time of a binary it found up to date, so that time
	// says nothing.)
	binaries := func() map[string]os.FileInfo {
		t.Helper()
		got := map[string]os.FileInfo{}
		for _, p := range []string{"0/a.test", "1/a.test", "0/f.test"} {
			fi, err := os.Stat(filepath.Join(bin, p))
			if err != nil {
				t.Fatal(err)
			}
			got[p] = fi
		}
		return got
	}
	// hold keeps each binary's file allocated under a second name, so
	// that a relink cannot get the old inode number back.
	held := 0
	hold := func() {
		t.Helper()
		held++
		for _, p := range []string{"0/a.test", "1/a.test", "0/f.test"} {
			if err := os.Link(filepath.Join(bin, p), filepath.Join(bin, fmt.Sprintf("%s.held%d", p, held))); err != nil {
				t.Fatal(err)
			}
		}
	}
	relinked := func(before, after map[string]os.FileInfo) []string {
		var got []string
		for _, p := range []string{"0/a.test", "1/a.test", "0/f.test"} {
			if !os.SameFile(before[p], after[p]) {
				got = append(got, p)
			}
		}
		return got
	}

	out, err := gotest()
	if err == nil || err.Error() != "2 package(s) failed" {
		t.Errorf("the first run's error is %v, want 2 package(s) failed", err)
	}
	lines := strings.Split(out, "\n")
	var summary []string
	for _, l := range lines {
		if strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "?   \t") {
			summary = append(summary, l)
		}
	}
	// The order of the runs is the go list order on a first run; the
	// binaries run two at a time, so sort what they printed.
	wantSummary := []string{
		"?   \texample.com/m/d\t[no test files]",
		"FAIL\texample.com/m/e [build failed]",
		"FAIL\texample.com/m/c\tTIMEs",
		"ok  \texample.com/m/a\tTIMEs",
		"ok  \texample.com/m/b/a\tTIMEs",
		"ok  \texample.com/m/f\tTIMEs",
	}
	if diff := cmp.Diff(sortedCopy(wantSummary), sortedCopy(summary)); diff != "" {
		t.Errorf("what go test would say of each package (-want +got):\n%s\n%s", diff, out)
	}
	for _, want := range []string{"undefined: undefined", "the message"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-skip did not skip") {
		t.Errorf("-skip did not skip TestSkipped:\n%s", out)
	}

	first := binaries()
	hold()
	if _, err := gotest(); err == nil {
		t.Error("the second run passed")
	}
	second := binaries()
	if diff := cmp.Diff([]string(nil), relinked(first, second)); diff != "" {
		t.Errorf("binaries linked again with nothing changed (-want +got):\n%s", diff)
	}

	hold()
	write("a/a.go", "package a\n\nfunc A() int { return 2 }\n")
	out, _ = gotest()
	if !strings.Contains(out, "FAIL\texample.com/m/a\t") {
		t.Errorf("the edited package's test did not fail:\n%s", out)
	}
	if diff := cmp.Diff([]string{"0/a.test"}, relinked(second, binaries())); diff != "" {
		t.Errorf("binaries linked again after an edit of package a (-want +got):\n%s", diff)
	}
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestRunRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no -bin", nil, "-bin: want the directory the test binaries are kept in"},
		{"an argument", []string{"-bin", "x", "./..."}, `unexpected arguments ["./..."]: gotest tests every package of the module in -C`},
		{"-p 0", []string{"-bin", "x", "-p", "0"}, "-p: 0 is not a positive number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.args, &bytes.Buffer{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
