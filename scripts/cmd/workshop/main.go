// Command workshop turns a chapter into a workshop exercise and checks the
// learner's work (see docs/workshop.md):
//
//	workshop start  --chapter 06 [--part 2]   workshop/06-scheduling-queue/, parts from 2 on as stubs
//	workshop check  --chapter 06 [--part 2]   the parts' unit tests, integration tests, scenarios
//	workshop diff   --chapter 06              the learner's code against the chapter's
//	workshop reset  --chapter 06 [--part 2]   keep the old copy under workshop/.old and start over
//	workshop prove  [--chapters 06,07] [--jobs 2]  every check fails on its starting point, passes when done
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"minisched/scripts/workshop"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "workshop: "+err.Error())
		os.Exit(1)
	}
}

type options struct {
	root, tools, chapter, chapters string
	part, jobs                     int
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("want a command: start, check, diff, reset or prove")
	}
	cmd := args[0]
	fs := flag.NewFlagSet("workshop "+cmd, flag.ContinueOnError)
	var o options
	fs.StringVar(&o.root, "root", ".", "repository root")
	fs.StringVar(&o.tools, "tools", ".cache/tools", "tools directory, for the scenarios' cluster")
	fs.StringVar(&o.chapter, "chapter", "", "chapter number, 06")
	fs.StringVar(&o.chapters, "chapters", "", "prove: comma-separated chapter numbers (default: all)")
	fs.IntVar(&o.jobs, "jobs", 1, "prove: how many chapters to prove at once (each proof keeps about one core busy)")
	fs.IntVar(&o.part, "part", 0, "part number (start, reset: the first part left as stubs; check: the part to check)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	specs, err := workshop.LoadSpecs(filepath.Join(o.root, "scripts", "workshop"))
	if err != nil {
		return err
	}
	if cmd == "prove" {
		return prove(ctx, o, specs)
	}
	spec, err := pick(specs, o.chapter)
	if err != nil {
		return err
	}
	if o.part < 0 || o.part > len(spec.Parts) {
		return fmt.Errorf("chapter %s has parts 1 to %d, not %d", spec.Chapter, len(spec.Parts), o.part)
	}
	switch cmd {
	case "start":
		return start(o, spec)
	case "reset":
		dir := filepath.Join(o.root, "workshop", spec.Chapter)
		if _, err := os.Stat(dir); err == nil {
			old := filepath.Join(o.root, "workshop", ".old", spec.Chapter+"-"+time.Now().Format("20060102-150405"))
			if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
				return err
			}
			if err := os.Rename(dir, old); err != nil {
				return err
			}
			fmt.Printf("Your previous copy is in %s.\n", old)
		}
		return start(o, spec)
	case "check":
		return check(ctx, o, spec)
	case "diff":
		dir := filepath.Join("workshop", spec.Chapter)
		if _, err := os.Stat(filepath.Join(o.root, dir)); err != nil {
			return fmt.Errorf("there is no %s: make workshop CHAPTER=%02d first", dir, spec.Number)
		}
		c := exec.Command("git", "diff", "--no-index", "--", spec.Chapter, dir)
		c.Dir, c.Stdout, c.Stderr = o.root, os.Stdout, os.Stderr
		var exit *exec.ExitError
		// git diff exits 1 when the trees differ, which is the normal case.
		if err := c.Run(); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			return err
		}
		return nil
	}
	return fmt.Errorf("unknown command %q: want start, check, diff, reset or prove", cmd)
}

func pick(specs []*workshop.Spec, chapter string) (*workshop.Spec, error) {
	n, err := strconv.Atoi(strings.TrimSpace(chapter))
	if err != nil {
		return nil, fmt.Errorf("CHAPTER=%q: want a chapter number such as 06", chapter)
	}
	var have []string
	for _, s := range specs {
		if s.Number == n {
			return s, nil
		}
		have = append(have, fmt.Sprintf("%02d", s.Number))
	}
	return nil, fmt.Errorf("chapter %02d has no workshop; these do: %s", n, strings.Join(have, ", "))
}

func start(o options, spec *workshop.Spec) error {
	dir := filepath.Join(o.root, "workshop", spec.Chapter)
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists: go on with it, or make workshop-reset CHAPTER=%02d to start over", dir, spec.Number)
	}
	first := max(o.part, 1)
	stub := map[int]bool{}
	for k := first; k <= len(spec.Parts); k++ {
		stub[k] = true
	}
	stubs, err := workshop.MakeCopy(filepath.Join(o.root, spec.Chapter), dir, spec, stub)
	if err != nil {
		os.RemoveAll(dir)
		// workshop/go.work must not name a copy that is gone.
		if werr := writeGoWork(o.root); werr != nil {
			return fmt.Errorf("%w (and rewriting workshop/go.work: %v)", err, werr)
		}
		return err
	}
	if err := writeGoWork(o.root); err != nil {
		return err
	}
	fmt.Printf("Created %s: chapter %s", dir, spec.Chapter)
	if first > 1 {
		fmt.Printf(" with parts 1 to %d done", first-1)
	}
	fmt.Println(", and these functions to write:")
	for _, s := range stubs {
		fmt.Printf("  part %d  %s  %s\n", s.Part, s.File, s.Func)
	}
	fmt.Println("Parts:")
	for k := first; k <= len(spec.Parts); k++ {
		p := spec.Parts[k-1]
		fmt.Printf("  %d. %s (%s, about %d min): %s\n", k, p.Title, p.Difficulty, p.Minutes, p.Doc)
		for _, r := range p.Unit {
			fmt.Printf("     its spec: go test -run '%s' %s\n", r.Run, r.Pkg)
		}
	}
	fmt.Printf("Check a part with: make workshop-check CHAPTER=%02d PART=%d\n", spec.Number, first)
	return nil
}

func check(ctx context.Context, o options, spec *workshop.Spec) error {
	ws := filepath.Join(o.root, "workshop")
	if _, err := os.Stat(filepath.Join(ws, spec.Chapter)); err != nil {
		return fmt.Errorf("there is no workshop/%s: make workshop CHAPTER=%02d first", spec.Chapter, spec.Number)
	}
	var parts []int
	if o.part > 0 {
		parts = []int{o.part}
	}
	c := &workshop.Checker{Root: o.root, Workshop: ws, Tools: o.tools, Log: os.Stderr}
	rows, err := c.Check(ctx, spec, parts)
	workshop.PrintTable(os.Stdout, rows)
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range rows {
		if r.Result != "PASS" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d checks do not pass yet", failed, len(rows))
	}
	fmt.Println("All checks pass.")
	return nil
}

func prove(ctx context.Context, o options, specs []*workshop.Spec) error {
	want := map[int]bool{}
	for _, s := range strings.Split(o.chapters, ",") {
		if s = strings.TrimSpace(s); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("--chapters: %q is not a number", s)
			}
			want[n] = true
		}
	}
	work, err := filepath.Abs(filepath.Join(o.root, ".cache", "workshop-prove"))
	if err != nil {
		return err
	}
	// Copies of an earlier run (or an older layout) go first.
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if o.jobs < 1 {
		return fmt.Errorf("--jobs: %d is not a positive number", o.jobs)
	}
	// The test binaries are kept (Prover.Bins): a warm run links only
	// those whose sources changed.
	bins, err := filepath.Abs(filepath.Join(o.root, ".cache", "testbin", "workshop-prove"))
	if err != nil {
		return err
	}
	// Chapters are proven o.jobs at a time, each into its own buffer, which
	// is printed whole when its chapter is done: the copies and test
	// binaries of a chapter live in folders named after it, so two proofs
	// share nothing but the Go build cache, which is safe to share.
	var (
		mu    sync.Mutex
		probs []string
		errs  []error
		wg    sync.WaitGroup
		slots = make(chan struct{}, o.jobs)
	)
	for _, s := range specs {
		if len(want) > 0 && !want[s.Number] {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			var out bytes.Buffer
			p := &workshop.Prover{Root: o.root, Work: work, Bins: bins, Out: &out}
			err := p.Prove(ctx, s)
			mu.Lock()
			defer mu.Unlock()
			os.Stdout.Write(out.Bytes())
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.Chapter, err))
			}
			probs = append(probs, p.Problems()...)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(probs) > 0 {
		fmt.Println("What does not hold:")
		for _, pr := range probs {
			fmt.Println("  " + pr)
		}
		return fmt.Errorf("%d check(s) of the workshop do not do what they must", len(probs))
	}
	fmt.Println("Every part's and every exercise's check fails on its starting point and passes when done.")
	return nil
}

// writeGoWork writes workshop/go.work naming every copy in workshop/. Go
// looks for the nearest go.work up from the current directory, and the
// repository's own does not list the copies: without this one, go test in
// a copy fails with "directory is outside modules listed in go.work".
func writeGoWork(root string) error {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return err
	}
	var goLine string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "go ") || strings.HasPrefix(l, "toolchain ") {
			goLine += l + "\n"
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, "workshop"))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("// Written by make workshop: the learners' copies of the chapters.\n\n" + goLine + "\nuse (\n")
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, "workshop", e.Name(), "go.mod")); err == nil && e.IsDir() {
			b.WriteString("\t./" + e.Name() + "\n")
		}
	}
	b.WriteString(")\n")
	return os.WriteFile(filepath.Join(root, "workshop", "go.work"), []byte(b.String()), 0o644)
}
