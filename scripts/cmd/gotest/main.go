// Command gotest is make test's `go test -race -count=1 ./...` for one
// module, with the test binaries kept between runs:
//
//	gotest -bin DIR [-p 2] [-skip REGEXP] [-timeout 10m]   (in the module's directory)
//
// Why not go test itself: go test links every test binary again on every
// run, into a temporary directory, even when nothing changed. A chapter's
// test binary holds client-go, the apiserver's packages and the race
// runtime, and linking it costs more CPU than most of its tests: the links
// were about half of make test's unit stage on a warm machine. `go test -c
// -o DIR/` writes the binaries to a fixed place, and the go command relinks
// one only when its build ID no longer matches the sources (the check it
// makes for `go build -o`), so a warm run links only what changed.
//
// It then runs each binary as go test would (cmd/go/internal/test's
// runTestActor): in the package's directory, with the go command's GOROOT/bin
// first in PATH, -test.paniconexit0 and -test.timeout, p binaries at a time,
// and prints what go test prints without -v: "ok" and the time for a package
// that passed, everything its binary said and "FAIL" for one that did not.
//
// go test -c runs go vet's high-confidence checks on each package, as go
// test does, and a finding fails the package's build.
package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gotest: "+err.Error())
		os.Exit(1)
	}
}

type options struct {
	dir, bin, skip string
	parallel       int
	timeout        time.Duration
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("gotest", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.dir, "C", ".", "the module's directory")
	fs.StringVar(&o.bin, "bin", "", "where the module's test binaries are kept between runs (required)")
	fs.StringVar(&o.skip, "skip", "", "go test's -skip: tests not to run")
	fs.IntVar(&o.parallel, "p", 2, "how many test binaries run at once (go test's -p; its default is the number of CPUs)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "go test's -timeout for each binary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case o.bin == "":
		return errors.New("-bin: want the directory the test binaries are kept in")
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q: gotest tests every package of the module in -C", fs.Args())
	case o.parallel < 1:
		return fmt.Errorf("-p: %d is not a positive number", o.parallel)
	case o.timeout <= 0:
		return fmt.Errorf("-timeout: %v is not a positive duration", o.timeout)
	}
	var err error
	if o.bin, err = filepath.Abs(o.bin); err != nil {
		return err
	}
	pkgs, err := listPackages(ctx, o.dir)
	if err != nil {
		return err
	}
	goroot, err := goCommand(ctx, o.dir, "env", "GOROOT")
	if err != nil {
		return err
	}
	failed := 0
	var tested []pkg
	for _, p := range pkgs {
		if p.loadError != "" {
			fmt.Fprintf(out, "%s\nFAIL\t%s [setup failed]\n", p.loadError, p.importPath)
			failed++
			continue
		}
		if !p.tests {
			fmt.Fprintf(out, "?   \t%s\t[no test files]\n", p.importPath)
			continue
		}
		tested = append(tested, p)
	}
	// One go test -c per group: with several packages, -o names a
	// directory, and two packages of one name cannot share it.
	var runnable []pkg
	for i, g := range groups(tested) {
		dir := filepath.Join(o.bin, fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		built, msgs := build(ctx, o.dir, dir, g)
		for _, p := range g {
			if msg, bad := msgs[p.importPath]; bad {
				fmt.Fprintf(out, "%s\nFAIL\t%s [build failed]\n", msg, p.importPath)
				failed++
			}
		}
		runnable = append(runnable, built...)
	}
	// The longest first, by the last run's times: a module's integration
	// package takes most of its time, and started last it would run
	// alone at the end.
	took := readDurations(filepath.Join(o.bin, durationsFile))
	slices.SortStableFunc(runnable, func(a, b pkg) int { return cmp.Compare(took[b.importPath], took[a.importPath]) })
	env := testEnv(os.Environ(), filepath.Join(goroot, "bin"))
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		slots = make(chan struct{}, o.parallel)
	)
	for _, p := range runnable {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			start := time.Now()
			res := runBinary(ctx, p, env, o)
			mu.Lock()
			defer mu.Unlock()
			took[p.importPath] = time.Since(start).Seconds()
			out.Write(res)
			if !bytes.HasPrefix(res, []byte("ok  \t")) {
				failed++
			}
		})
	}
	wg.Wait()
	writeDurations(filepath.Join(o.bin, durationsFile), took)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if failed > 0 {
		return fmt.Errorf("%d package(s) failed", failed)
	}
	return nil
}

// build links the test binaries of the packages g into dir, with one go
// test -c, and returns those it linked. When that fails, it builds them
// one by one, so that a package that does not compile fails alone (and is
// not run: dir may hold its binary of an earlier run) while the others
// run. msgs holds the go command's words for each package that failed.
//
// A binary the go command did not write or check in this build is not
// run: the go command sets the modification time of every binary it
// checks, up to date or linked anew, so an older one is left from an
// earlier run (a name this code got wrong would show so).
func build(ctx context.Context, module, dir string, g []pkg) (built []pkg, msgs map[string]string) {
	msgs = map[string]string{}
	start := time.Now().Add(-time.Second) // file times may be coarser than the clock
	args := []string{"test", "-c", "-race", "-ldflags=-w", "-o", dir + string(filepath.Separator)}
	for _, p := range g {
		args = append(args, p.importPath)
	}
	text, err := goCommand(ctx, module, args...)
	for _, p := range g {
		p.binary = filepath.Join(dir, testBinaryName(p.importPath))
		if err != nil && len(g) > 1 {
			if msg, err := goCommand(ctx, module, "test", "-c", "-race", "-ldflags=-w", "-o", p.binary, p.importPath); err != nil {
				msgs[p.importPath] = msg
				continue
			}
		} else if err != nil {
			msgs[p.importPath] = text
			continue
		}
		if fi, err := os.Stat(p.binary); err != nil || fi.ModTime().Before(start) {
			msgs[p.importPath] = fmt.Sprintf("gotest: go test -c did not write %s (%v)", p.binary, err)
			continue
		}
		built = append(built, p)
	}
	return built, msgs
}

// durationsFile, in -bin, holds each package's time in the last run.
const durationsFile = "durations"

func readDurations(file string) map[string]float64 {
	took := map[string]float64{}
	data, _ := os.ReadFile(file)
	for _, line := range strings.Split(string(data), "\n") {
		if name, secs, ok := strings.Cut(line, " "); ok {
			if s, err := strconv.ParseFloat(secs, 64); err == nil {
				took[name] = s
			}
		}
	}
	return took
}

// writeDurations keeps the times for the next run's order; losing them
// costs only that order.
func writeDurations(file string, took map[string]float64) {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(took)) {
		fmt.Fprintf(&b, "%s %.3f\n", name, took[name])
	}
	_ = os.WriteFile(file, []byte(b.String()), 0o644)
}

type pkg struct {
	importPath, dir, binary string
	tests                   bool
	// loadError is why go list could not load the package.
	loadError string
}

// listPackages lists the module's packages as ./... matches them, and
// whether each has tests.
func listPackages(ctx context.Context, dir string) ([]pkg, error) {
	// -e: a package that does not load is reported as go test reports
	// it ([setup failed]), and the others still run. Its error is
	// printed with %q, so that it stays on its line.
	text, err := goCommand(ctx, dir, "list", "-e", "-f", `{{.ImportPath}}	{{.Dir}}	{{if or .TestGoFiles .XTestGoFiles}}tests{{end}}	{{with .Error}}{{printf "%q" .Err}}{{end}}`, "./...")
	if err != nil {
		return nil, err
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 3 { // the output was trimmed after an empty last field
			f = append(f, "")
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("go list said %q", line)
		}
		p := pkg{importPath: f[0], dir: f[1], tests: f[2] == "tests"}
		if f[3] != "" {
			if p.loadError, err = strconv.Unquote(f[3]); err != nil {
				p.loadError = f[3]
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// groups splits the packages, in order, into as few groups as it can in
// which no two packages have the same test binary name.
func groups(pkgs []pkg) [][]pkg {
	var gs [][]pkg
	var names []map[string]bool
	for _, p := range pkgs {
		n := testBinaryName(p.importPath)
		i := 0
		for i < len(gs) && names[i][n] {
			i++
		}
		if i == len(gs) {
			gs = append(gs, nil)
			names = append(names, map[string]bool{})
		}
		gs[i] = append(gs[i], p)
		names[i][n] = true
	}
	return gs
}

// testBinaryName is the name go test -c gives a package's test binary:
// cmd/go/internal/test's testBinaryName, from load.Package's
// exeFromImportPath, which names example.com/cmd/v2 after cmd.
func testBinaryName(importPath string) string {
	dir, elem := path.Split(importPath)
	if dir != "" && isVersionElement(elem) {
		elem = path.Base(strings.TrimSuffix(dir, "/"))
	}
	return elem + ".test"
}

// isVersionElement is cmd/go/internal/load's: v2, v3 and on.
func isVersionElement(s string) bool {
	if len(s) < 2 || s[0] != 'v' || s[1] == '0' || s[1] == '1' && len(s) == 2 {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || '9' < s[i] {
			return false
		}
	}
	return true
}

// testEnv is the environment go test gives a test binary: its own, with
// the go command's GOROOT/bin first in PATH (base.AppendPATH), so that a
// test that runs go runs the same go.
func testEnv(env []string, gorootBin string) []string {
	out := make([]string, 0, len(env)+1)
	pathSet := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + gorootBin + string(os.PathListSeparator) + v
			pathSet = true
		}
		out = append(out, kv)
	}
	if !pathSet {
		out = append(out, "PATH="+gorootBin)
	}
	return out
}

// runBinary runs one package's test binary and returns what go test would
// print for it. Like go test (runTestActor), it sends a binary that
// outlives its -test.timeout by a minute SIGQUIT, which dumps its
// goroutines, and waits max(5s, timeout/10) for its output to close.
func runBinary(ctx context.Context, p pkg, env []string, o options) []byte {
	ctx, cancel := context.WithTimeout(ctx, o.timeout+time.Minute)
	defer cancel()
	args := []string{"-test.paniconexit0", "-test.timeout=" + o.timeout.String(), "-test.count=1"}
	if o.skip != "" {
		args = append(args, "-test.skip="+o.skip)
	}
	cmd := exec.CommandContext(ctx, p.binary, args...)
	cmd.Dir = p.dir
	cmd.Env = append(slices.Clip(env), "PWD="+p.dir)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.Cancel = func() error {
		if ctx.Err() == context.DeadlineExceeded {
			return cmd.Process.Signal(syscall.SIGQUIT)
		}
		// Interrupted (make test stopped): the binary had the
		// terminal's signal too; let it clean up (envtest stops its
		// apiserver) for WaitDelay.
		return cmd.Process.Signal(os.Interrupt)
	}
	cmd.WaitDelay = max(5*time.Second, o.timeout/10)
	start := time.Now()
	err := cmd.Run()
	secs := time.Since(start).Seconds()
	if err == nil {
		return fmt.Appendf(nil, "ok  \t%s\t%.3fs\n", p.importPath, secs)
	}
	if buf.Len() > 0 && !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		buf.WriteByte('\n')
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		fmt.Fprintf(&buf, "*** Test killed with quit: ran too long (%v).\n", o.timeout+time.Minute)
	case errors.Is(err, exec.ErrWaitDelay):
		fmt.Fprintf(&buf, "*** Test I/O incomplete %v after exiting.\n", cmd.WaitDelay)
	}
	if ee, ok := err.(*exec.ExitError); !ok || !ee.Exited() || buf.Len() == 0 {
		fmt.Fprintln(&buf, err)
	}
	fmt.Fprintf(&buf, "FAIL\t%s\t%.3fs\n", p.importPath, secs)
	return buf.Bytes()
}

// goCommand runs the go command in dir and returns its standard output,
// trimmed: what it says on standard error ("go: downloading ..." on a
// fresh module cache) is not part of an answer. On failure the text is
// both, and the error says it too.
func goCommand(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		text := strings.TrimSpace(stdout.String() + "\n" + stderr.String())
		return text, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, text)
	}
	return strings.TrimSpace(stdout.String()), nil
}
