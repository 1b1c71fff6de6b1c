package workshop

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// unitTimeout bounds one go test run of the proof: a stub that makes a test
// wait forever shows as a failure after this long instead of hanging.
const unitTimeout = 3 * time.Minute

// Prover runs the proof that every check of a chapter's workshop can fail.
type Prover struct {
	// Root is the repository; Work a scratch directory for the copies.
	Root, Work string
	// Bins keeps the test binaries from run to run: the go command links
	// one again only when its sources changed (it checks the build ID of
	// the file that go test -c -o names), and linking is most of the
	// proof's cost.
	Bins string
	Out  io.Writer
	// problems collects what did not hold.
	problems []string
}

// Prove checks one chapter on the states a learner meets: S_k, where parts
// 1 to k are written and parts k+1 on are stubs (what `make workshop
// PART=k+1` starts from). S_0 is the starter and S_n the finished chapter.
//   - the starter and the start of the last part compile, tests included
//     (go vet);
//   - on S_(k-1), part k's unit tests fail: the learner has something to do;
//   - on S_k, part k's unit tests pass, the later parts still stubs: the
//     learner who has written parts 1 to k sees part k pass;
//   - each break exercise's tests fail with its edits and pass without;
//   - each extend exercise's given tests fail on the chapter and pass with
//     the solution.
//
// The two claims about part k differ only by part k's stubs, so part k's
// tests fail because of them. The states vetted are the copies a learner
// gets, stubbed as MakeCopy stubs them. Their tests run on a switchable copy
// (MakeSwitchableCopy), whose functions run MakeCopy's stubs when told to:
// one test binary per package serves every state.
func (p *Prover) Prove(ctx context.Context, spec *Spec) error {
	src := filepath.Join(p.Root, spec.Chapter)
	testdata := filepath.Join(p.Root, "scripts", "workshop", "testdata")
	n := len(spec.Parts)
	name := func(k int) string { return fmt.Sprintf("%s part %d (%s)", spec.Chapter, k, spec.Parts[k-1].Title) }

	// S_0 and S_(n-1), as the learner gets them (make workshop PART=1 and
	// PART=n): they compile, tests included (go vet type-checks without
	// linking). They are the most and the fewest stubs; the states between
	// stub a subset of S_0's functions with the same stubs, and keep the
	// imports their other bodies use. Vetting each would cost 5 s a state.
	for _, k := range slices.Compact([]int{0, n - 1}) {
		if ctx.Err() != nil {
			break
		}
		later := map[int]bool{}
		for j := k + 1; j <= n; j++ {
			later[j] = true
		}
		dir, stubs, err := p.copy(spec, later)
		if err != nil {
			return err
		}
		start := time.Now()
		state := fmt.Sprintf("S_%d (parts %d to %d stubbed, %d functions)", k, k+1, n, len(stubs))
		if out, err := goCmd(ctx, dir, "vet", "./..."); err != nil {
			p.fail("%s %s: go vet ./... (compiles the tests too): %v\n%s", spec.Chapter, state, err, out)
			continue
		}
		p.logf("  ok    %s %s compiles, tests included (go vet, %.0fs)\n", spec.Chapter, state, time.Since(start).Seconds())
	}

	sw, bins, err := p.switchable(ctx, spec)
	if err != nil {
		return err
	}
	// stubbedFrom lists parts k to n: the stubs of S_(k-1).
	stubbedFrom := func(k int) string {
		var parts []string
		for j := k; j <= n; j++ {
			parts = append(parts, strconv.Itoa(j))
		}
		return strings.Join(parts, ",")
	}
	for k := 1; k <= n && ctx.Err() == nil; k++ {
		unit := spec.Parts[k-1].Unit
		p.expectState(ctx, name(k)+", it and the parts after it stubbed", sw, bins, unit, stubbedFrom(k), false)
		done := ", parts after it stubbed"
		if k == n {
			done = ", nothing stubbed (the finished chapter's code)"
		}
		p.expectState(ctx, name(k)+done, sw, bins, unit, stubbedFrom(k+1), true)
	}

	for i, e := range spec.Exercises {
		name := fmt.Sprintf("%s exercise %d (%s)", spec.Chapter, i+1, e.Title)
		// Each state of an exercise has binaries of its own: a warm run
		// finds them up to date.
		bins := func(state string) string {
			return filepath.Join(p.Bins, spec.Chapter, fmt.Sprintf("exercise-%d-%s", i+1, state))
		}
		dir, _, err := p.copy(spec, nil)
		if err != nil {
			return err
		}
		switch e.Kind {
		case "break":
			if err := ApplyEdits(dir, e.Edits); err != nil {
				p.fail("%s: %v", name, err)
				continue
			}
			p.expect(ctx, name+", broken", bins("broken"), dir, e.Unit, false)
			p.expect(ctx, name+", finished chapter", "", src, e.Unit, true)
		case "extend":
			if err := CopyFiles(dir, testdata, e.Files); err != nil {
				p.fail("%s: %v", name, err)
				continue
			}
			p.expect(ctx, name+", given test on the chapter", bins("given"), dir, e.Unit, false)
			if err := CopyFiles(dir, testdata, e.Solution.Files); err != nil {
				p.fail("%s: %v", name, err)
				continue
			}
			if err := ApplyEdits(dir, e.Solution.Edits); err != nil {
				p.fail("%s: %v", name, err)
				continue
			}
			p.expect(ctx, name+", with the solution", bins("solution"), dir, e.Unit, true)
		}
	}
	return nil
}

// switchable makes the chapter's switchable copy and links the test binary
// of each package that the parts' unit tests are in, once. A package whose
// binary does not link gets none: the claims on it fail.
func (p *Prover) switchable(ctx context.Context, spec *Spec) (string, map[string]string, error) {
	// One path per chapter, kept from run to run, so the build cache
	// compiles only what changed.
	dir := filepath.Join(p.Work, spec.Chapter+"-switch")
	if err := os.RemoveAll(dir); err != nil {
		return "", nil, err
	}
	if _, err := MakeSwitchableCopy(filepath.Join(p.Root, spec.Chapter), dir, spec); err != nil {
		return "", nil, err
	}
	bins := map[string]string{}
	for _, part := range spec.Parts {
		for _, r := range part.Unit {
			if _, done := bins[r.Pkg]; done {
				continue
			}
			bin := filepath.Join(p.Bins, spec.Chapter, "switchable", binaryName(r.Pkg))
			start := time.Now()
			if err := BuildTestBinary(ctx, dir, r.Pkg, bin); err != nil {
				p.fail("%s: the switchable copy: %v", spec.Chapter, err)
				bins[r.Pkg] = ""
				continue
			}
			p.logf("  %s: linked the tests of %s (%.0fs)\n", spec.Chapter, r.Pkg, time.Since(start).Seconds())
			bins[r.Pkg] = bin
		}
	}
	return dir, bins, nil
}

// expectState runs the tests on the switchable copy dir with the parts in
// stubs stubbed, and records a problem unless each run passed (pass) or
// failed in a test (not pass).
func (p *Prover) expectState(ctx context.Context, name, dir string, bins map[string]string, runs []TestRun, stubs string, pass bool) {
	for _, r := range runs {
		if missing, err := MissingTests(filepath.Join(dir, r.Pkg), r.Run); err != nil || len(missing) > 0 {
			p.fail("%s: %s names tests the package does not have: %v (%v)", name, r, missing, err)
			continue
		}
		if bins[r.Pkg] == "" {
			p.fail("%s: %s: no test binary", name, r)
			continue
		}
		p.judge(name, r, RunTestBinary(ctx, bins[r.Pkg], dir, r, stubs, unitTimeout), pass)
	}
}

// judge records a problem unless res passed (pass) or failed in a test.
func (p *Prover) judge(name string, r TestRun, res Result, pass bool) {
	want := "fail"
	ok := res.FailedByTest()
	if pass {
		want, ok = "pass", res.Passed()
	}
	verdict := "ok"
	if !ok {
		verdict = "WRONG"
		p.fail("%s: %s should %s: %s", name, r, want, res.Summary())
	}
	p.logf("  %-5s %s: %s should %s: %s (%.0fs)\n", verdict, name, r, want, oneLine(res.Summary(), 160), res.Duration.Seconds())
}

// Problems is what did not hold, one line each.
func (p *Prover) Problems() []string { return p.problems }

func (p *Prover) copy(spec *Spec, stub map[int]bool) (string, []Stubbed, error) {
	// Every copy of a chapter goes to the same path: the build cache keys
	// a package by its directory and its files, so the packages a copy
	// does not change are not compiled again.
	dir := filepath.Join(p.Work, spec.Chapter)
	if err := os.RemoveAll(dir); err != nil {
		return "", nil, err
	}
	stubs, err := MakeCopy(filepath.Join(p.Root, spec.Chapter), dir, spec, stub)
	return dir, stubs, err
}

// expect runs the tests and records a problem unless each run passed (pass)
// or failed in a test (not pass). It links each package's test binary into
// bins, where a warm run finds it up to date, and runs it as go test would.
//
// On the finished chapter itself (finished), the pass side is proven by make
// test's unit stage, which runs every test of every chapter first: here it
// only checks, without compiling, that the -run pattern names tests that
// exist, so a pattern that matches nothing cannot pass unseen.
func (p *Prover) expect(ctx context.Context, name, bins, dir string, runs []TestRun, pass bool) {
	finished := dir == filepath.Join(p.Root, filepath.Base(dir)) && !strings.HasPrefix(dir, p.Work)
	for _, r := range runs {
		if missing, err := MissingTests(filepath.Join(dir, r.Pkg), r.Run); err != nil || len(missing) > 0 {
			p.fail("%s: %s names tests the package does not have: %v (%v)", name, r, missing, err)
			continue
		}
		if pass && finished {
			names, err := TestNames(filepath.Join(dir, r.Pkg), r.Run)
			verdict := "ok"
			if err != nil || len(names) == 0 {
				verdict = "WRONG"
				p.fail("%s: %s matches no test in the chapter (%v)", name, r, err)
			}
			p.logf("  %-5s %s: %s names %s, which the unit stage runs\n", verdict, name, r, strings.Join(names, ", "))
			continue
		}
		start := time.Now()
		bin := filepath.Join(bins, binaryName(r.Pkg))
		if err := BuildTestBinary(ctx, dir, r.Pkg, bin); err != nil {
			p.judge(name, r, Result{Run: r, BuildFailed: true, First: err.Error(), Duration: time.Since(start)}, pass)
			continue
		}
		res := RunTestBinary(ctx, bin, dir, r, "", unitTimeout)
		res.Duration = time.Since(start)
		p.judge(name, r, res, pass)
	}
}

// binaryName names the test binary of package pkg (./scheduler) in a
// folder of binaries.
func binaryName(pkg string) string {
	return strings.NewReplacer("/", "_", ".", "_").Replace(pkg) + ".test"
}

func (p *Prover) fail(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

func (p *Prover) logf(format string, args ...any) { fmt.Fprintf(p.Out, format, args...) }

func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// TestNames lists the top-level Test functions of the package in dir that
// the -run pattern selects (its part before the first "/", which go test
// matches against top-level names).
func TestNames(dir, run string) ([]string, error) {
	re, err := regexp.Compile(topLevel(run))
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			if re.MatchString(m[1]) {
				names = append(names, m[1])
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// MissingTests lists the names a -run pattern spells out, such as
// ^(TestA|TestB)$, that are not Test functions of the package in dir: a
// pattern that names a test that is gone would still pass on the others.
func MissingTests(dir, run string) ([]string, error) {
	all, err := TestNames(dir, ".")
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range all {
		have[n] = true
	}
	var missing []string
	for _, alt := range alternatives(topLevel(run)) {
		if !have[alt] {
			missing = append(missing, alt)
		}
	}
	return missing, nil
}

// topLevel is a -run pattern's part before its first "/" outside brackets
// and parentheses, as the testing package splits it.
func topLevel(run string) string {
	depth := 0
	for i, c := range run {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 {
				return run[:i]
			}
		}
	}
	return run
}

// alternatives returns the literal names of a pattern of the form ^Name$
// or ^(A|B|C)$, and nothing for any other pattern.
func alternatives(pattern string) []string {
	p, ok := strings.CutPrefix(pattern, "^")
	if !ok {
		return nil
	}
	if p, ok = strings.CutSuffix(p, "$"); !ok {
		return nil
	}
	if strings.HasPrefix(p, "(") && strings.HasSuffix(p, ")") {
		p = p[1 : len(p)-1]
	}
	alts := strings.Split(p, "|")
	for _, a := range alts {
		if !literalName.MatchString(a) {
			return nil
		}
	}
	return alts
}

var literalName = regexp.MustCompile(`^Test\w*$`)

var testFunc = regexp.MustCompile(`(?m)^func (Test[A-Z0-9_]\w*)\(t \*testing\.T\)`)
