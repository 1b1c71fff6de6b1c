package workshop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Result is what one `go test -json -run ... pkg` said.
type Result struct {
	Run TestRun
	// Ran counts the top-level tests that ran; Failed and Skipped those
	// that failed or skipped.
	Ran, Failed, Skipped int
	// BuildFailed is set when the package or its tests did not compile.
	BuildFailed bool
	// ExitOK is go test's exit status.
	ExitOK bool
	// First is the first failure's message, a few lines.
	First    string
	Duration time.Duration
}

// Passed is true when go test passed, ran at least one test and skipped
// none: a -run pattern that matches nothing proves nothing.
func (r Result) Passed() bool { return r.ExitOK && r.Ran > 0 && r.Skipped == 0 }

// FailedByTest is true when the tests compiled and at least one of them
// failed (an assertion, a panic, or the -timeout, which fails the running
// test): the kind of failure a stub or an edit must cause. A package that
// fails with every test passed (goleak in TestMain) or a go command that
// fails before running anything does not count.
func (r Result) FailedByTest() bool { return !r.ExitOK && !r.BuildFailed && r.Failed > 0 }

// Summary is one line for a table.
func (r Result) Summary() string {
	switch {
	case r.BuildFailed:
		return "does not compile: " + r.First
	case r.Passed():
		return fmt.Sprintf("%d test(s) passed", r.Ran)
	case r.ExitOK && r.Ran == 0:
		return "no test matches -run '" + r.Run.Run + "'"
	case r.ExitOK:
		return fmt.Sprintf("%d test(s) skipped", r.Skipped)
	}
	return r.First
}

type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// GoTest runs go test with the race detector in dir (a chapter or a copy
// of one) and reads its JSON events. The test binary goes without DWARF
// (-w), as BuildTestBinary's: linking is most of a run's cost.
func GoTest(ctx context.Context, dir string, run TestRun, timeout time.Duration) Result {
	args := []string{"test", "-json", "-race", "-count=1", "-ldflags=-w", "-timeout", timeout.String(), "-run", run.Run, run.Pkg}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	return readTestEvents(cmd, run)
}

// BuildTestBinary links the test binary of package pkg of dir, with the
// race detector, into out. Without DWARF (-w): nobody debugs it, and its
// link is the proof's cost.
func BuildTestBinary(ctx context.Context, dir, pkg, out string) error {
	if output, err := goCmd(ctx, dir, "test", "-c", "-race", "-ldflags=-w", "-o", out, pkg); err != nil {
		return fmt.Errorf("go test -c %s: %v\n%s", pkg, err, output)
	}
	return nil
}

// RunTestBinary runs a test binary that BuildTestBinary linked from
// package run.Pkg of dir, as go test would (in the package's directory,
// through test2json), with the parts in stubs stubbed (StubEnv).
func RunTestBinary(ctx context.Context, bin, dir string, run TestRun, stubs string, timeout time.Duration) Result {
	test2json, err := test2jsonPath()
	if err != nil {
		return Result{Run: run, BuildFailed: true, First: err.Error()}
	}
	// go test's backup alarm: a binary wedged past its own -test.timeout
	// is stopped a minute later.
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, test2json, "-t", "-p", run.Pkg, bin,
		"-test.v=test2json", "-test.paniconexit0", "-test.count=1", "-test.timeout="+timeout.String(), "-test.run="+run.Run)
	cmd.Dir = filepath.Join(dir, run.Pkg)
	cmd.Env = append(os.Environ(), StubEnv+"="+stubs)
	// Cancelled, test2json is killed, but the test binary it started
	// holds the output open: stop waiting for it after a while.
	cmd.WaitDelay = 5 * time.Second
	return readTestEvents(cmd, run)
}

// test2jsonPath is the go command's test2json, asked of it once: `go tool
// -n` prints where the build cache keeps it, building it first if need be.
var test2jsonPath = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "tool", "-n", "test2json").Output()
	if err != nil {
		return "", fmt.Errorf("go tool -n test2json: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// readTestEvents runs cmd, which prints go test's JSON events, and reads
// them.
func readTestEvents(cmd *exec.Cmd, run TestRun) Result {
	start := time.Now()
	res := Result{Run: run}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	res.ExitOK = err == nil
	res.Duration = time.Since(start)

	outputs := map[string][]string{} // test -> its output lines
	var pkgOutput, buildOutput []string
	var firstFailed string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev testEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			buildOutput = append(buildOutput, sc.Text())
			continue
		}
		top := ev.Test != "" && !strings.Contains(ev.Test, "/")
		switch ev.Action {
		case "build-output":
			buildOutput = append(buildOutput, strings.TrimRight(ev.Output, "\n"))
		case "build-fail":
			res.BuildFailed = true
		case "run":
			if top {
				res.Ran++
			}
		case "skip":
			if top {
				res.Skipped++
			}
		case "fail":
			if top {
				res.Failed++
			}
			// A subtest fails before its parent: its output holds the
			// message.
			if ev.Test != "" && firstFailed == "" {
				firstFailed = ev.Test
			}
		case "output":
			line := strings.TrimRight(ev.Output, "\n")
			if ev.Test != "" {
				outputs[ev.Test] = append(outputs[ev.Test], line)
			} else {
				pkgOutput = append(pkgOutput, line)
				if strings.Contains(line, "[setup failed]") || strings.Contains(line, "[build failed]") {
					res.BuildFailed = true
				}
			}
		}
	}
	if res.ExitOK {
		return res
	}
	switch {
	case res.BuildFailed:
		res.First = firstLines(append(buildOutput, strings.Split(stderr.String(), "\n")...), 3)
	case firstFailed != "":
		res.First = firstFailed + ": " + firstLines(outputs[firstFailed], 3)
	default:
		// The binary died outside a test (a panic, a timeout) or go test
		// itself failed.
		res.First = firstLines(append(pkgOutput, strings.Split(stderr.String(), "\n")...), 3)
	}
	return res
}

// logLine is a klog line a test logged through ktesting: context, not the
// failure.
var logLine = regexp.MustCompile(`^\S+\.go:\d+: [IWE]\d{4} `)

// firstLines keeps the first n lines that say something: not go test's own
// bookkeeping.
func firstLines(lines []string, n int) string {
	var keep []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- FAIL") ||
			strings.HasPrefix(t, "FAIL") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "exit status") ||
			logLine.MatchString(t) {
			continue
		}
		keep = append(keep, t)
		if len(keep) == n {
			break
		}
	}
	return strings.Join(keep, " | ")
}
