package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"minisched/scripts/cluster"
)

// Flags are the command-line options of the suite's commands (e2e,
// compare).
type Flags struct {
	Root, Tools, Chapters, ScenarioDir, Run, Out string
	// Parallel is how many runs play at once, each on a local cluster
	// of its own; 0 means 1.
	Parallel int
}

// Register adds the flags to fs; out is the default output directory.
// lanes is --parallel's default.
func (f *Flags) Register(fs *flag.FlagSet, out string, lanes int) {
	fs.StringVar(&f.Root, "root", ".", "repository root")
	fs.StringVar(&f.Tools, "tools", ".cache/tools", "tools directory (see scripts/build-tools.sh)")
	fs.StringVar(&f.Chapters, "chapters", "", "comma-separated chapter numbers (default: every chapter present)")
	fs.StringVar(&f.ScenarioDir, "scenarios", "scripts/e2e/scenarios", "directory of scenario files")
	fs.StringVar(&f.Run, "run", "", "run only scenarios whose name matches this regular expression")
	fs.StringVar(&f.Out, "out", out, "directory for the cluster's files and the schedulers' logs")
	fs.IntVar(&f.Parallel, "parallel", lanes, "runs played at once, each on a local cluster of its own")
}

// Harness is a suite run ready to play: the scenarios selected, each
// chapter's scheduler built with the race detector, and one runner per
// lane (Flags.Parallel), each on a local cluster of its own.
type Harness struct {
	Scenarios []*Scenario
	Chapters  []Chapter
	// Binaries maps a chapter's number to its built scheduler.
	Binaries map[int]string
	// Dir holds this run's binaries, cluster files and logs.
	Dir string
	// Runners play side by side, each on its own cluster (see Play).
	Runners []*Runner
	// Cluster and Runner are the first lane's, for commands that play one
	// thing at a time.
	Cluster *cluster.Cluster
	Runner  *Runner
	// Root is the repository's root.
	Root string
}

// ChapterScheduler returns how to run chapter c's binary with flags (the
// verbosity and the like, which kube-scheduler takes too): the chapters'
// command line, or for chapter 13 kube-scheduler's, with its default
// configuration and the GenericWorkload gate (pod groups, as the scenarios
// of chapter 11 on need).
func (h *Harness) ChapterScheduler(c Chapter, flags ...string) (Scheduler, error) {
	if c.Number == PluginsChapter {
		return PluginsScheduler(h.Root, h.Dir, h.Binaries[c.Number], DefaultPluginsConfig, ChapterClient, append(flags, "--feature-gates=GenericWorkload=true")...)
	}
	return Scheduler{Chapter: c.Number, Label: c.Dir, Command: append([]string{h.Binaries[c.Number]}, flags...)}, nil
}

// Setup loads the scenarios, builds the selected chapters for which keep
// returns true, and starts the cluster. Close stops it.
func Setup(ctx context.Context, f Flags, keep func(Chapter) bool) (*Harness, error) {
	filter, err := regexp.Compile(f.Run)
	if err != nil {
		return nil, fmt.Errorf("--run: %w", err)
	}
	all, err := LoadDir(f.ScenarioDir)
	if err != nil {
		return nil, err
	}
	h := &Harness{Binaries: map[int]string{}, Root: f.Root}
	for _, sc := range all {
		if filter.MatchString(sc.Name) {
			h.Scenarios = append(h.Scenarios, sc)
		}
	}
	found, err := FindChapters(f.Root)
	if err != nil {
		return nil, err
	}
	selected, err := SelectChapters(found, f.Chapters)
	if err != nil {
		return nil, err
	}
	for _, c := range selected {
		if keep(c) {
			h.Chapters = append(h.Chapters, c)
		}
	}
	if len(h.Chapters) == 0 {
		return nil, fmt.Errorf("no chapter to run under %s (--chapters %q)", f.Root, f.Chapters)
	}
	h.Dir, err = filepath.Abs(filepath.Join(f.Out, time.Now().Format("20060102-150405")))
	if err != nil {
		return nil, err
	}
	binDir := filepath.Join(h.Dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, err
	}
	for _, c := range h.Chapters {
		fmt.Fprintf(os.Stderr, "building %s (with -race)\n", c.Dir)
		if h.Binaries[c.Number], err = BuildChapter(f.Root, c, binDir); err != nil {
			return nil, err
		}
	}
	lanes := max(f.Parallel, 1)
	if lanes == 1 {
		fmt.Fprintln(os.Stderr, "starting the local cluster")
	} else {
		fmt.Fprintf(os.Stderr, "starting %d local clusters\n", lanes)
	}
	// The clusters start side by side: each waits mostly for its apiserver.
	clusters := make([]*cluster.Cluster, lanes)
	errs := make([]error, lanes)
	var wg sync.WaitGroup
	for i := range lanes {
		dir := filepath.Join(h.Dir, "cluster")
		if i > 0 {
			dir += fmt.Sprint("-", i+1)
		}
		wg.Go(func() { clusters[i], errs[i] = cluster.Start(ctx, cluster.Options{ToolsDir: f.Tools, Dir: dir}) })
	}
	wg.Wait()
	for i, c := range clusters {
		if errs[i] != nil {
			continue
		}
		c.Config.QPS, c.Config.Burst = 1000, 2000
		h.Runners = append(h.Runners, &Runner{Cluster: c, Client: kubernetes.NewForConfigOrDie(c.Config), LogDir: h.Dir})
	}
	if err := errors.Join(errs...); err != nil {
		h.Close()
		return nil, err
	}
	h.Runner, h.Cluster = h.Runners[0], h.Runners[0].Cluster
	return h, nil
}

// Play runs jobs 0 to n-1 on the runners, one job per runner at a time,
// and reports each result in the order of the jobs, as soon as it and
// those before it are done. Scenarios mostly wait (for watches, for their
// scheduler's backoffs), so a few of them play side by side on two cores
// in about the time of one. Jobs not started when ctx ends are not
// reported; Play then returns ctx's error.
func Play[T any](ctx context.Context, runners []*Runner, n int, job func(ctx context.Context, r *Runner, i int) T, report func(i int, res T)) error {
	if len(runners) == 0 && n > 0 {
		return errors.New("no runner to play on")
	}
	results := make([]T, n)
	ran := make([]bool, n)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	next := make(chan int)
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for _, r := range runners {
		go func() {
			for i := range next {
				if ctx.Err() == nil {
					results[i], ran[i] = job(ctx, r, i), true
				}
				close(done[i])
			}
		}()
	}
	for i := range n {
		<-done[i]
		if ran[i] {
			report(i, results[i])
		}
	}
	return ctx.Err()
}

// Close stops the clusters.
func (h *Harness) Close() {
	for _, r := range h.Runners {
		if err := r.Cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}
}
