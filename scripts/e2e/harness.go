package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"k8s.io/client-go/kubernetes"

	"minisched/scripts/cluster"
)

// Flags are the command-line options of the suite's commands (e2e,
// compare).
type Flags struct {
	Root, Tools, Chapters, ScenarioDir, Run, Out string
}

// Register adds the flags to fs; out is the default output directory.
func (f *Flags) Register(fs *flag.FlagSet, out string) {
	fs.StringVar(&f.Root, "root", ".", "repository root")
	fs.StringVar(&f.Tools, "tools", ".cache/tools", "tools directory (see scripts/build-tools.sh)")
	fs.StringVar(&f.Chapters, "chapters", "", "comma-separated chapter numbers (default: every chapter present)")
	fs.StringVar(&f.ScenarioDir, "scenarios", "scripts/e2e/scenarios", "directory of scenario files")
	fs.StringVar(&f.Run, "run", "", "run only scenarios whose name matches this regular expression")
	fs.StringVar(&f.Out, "out", out, "directory for the cluster's files and the schedulers' logs")
}

// Harness is a suite run ready to play: the scenarios selected, each
// chapter's scheduler built with the race detector, one local cluster
// started, and a runner on it.
type Harness struct {
	Scenarios []*Scenario
	Chapters  []Chapter
	// Binaries maps a chapter's number to its built scheduler.
	Binaries map[int]string
	// Dir holds this run's binaries, cluster files and logs.
	Dir     string
	Cluster *cluster.Cluster
	Runner  *Runner
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
	h := &Harness{Binaries: map[int]string{}}
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
	fmt.Fprintln(os.Stderr, "starting the local cluster")
	h.Cluster, err = cluster.Start(ctx, cluster.Options{ToolsDir: f.Tools, Dir: filepath.Join(h.Dir, "cluster")})
	if err != nil {
		return nil, err
	}
	h.Cluster.Config.QPS, h.Cluster.Config.Burst = 1000, 2000
	h.Runner = &Runner{Cluster: h.Cluster, Client: kubernetes.NewForConfigOrDie(h.Cluster.Config), LogDir: h.Dir}
	return h, nil
}

// Close stops the cluster.
func (h *Harness) Close() {
	if err := h.Cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
	}
}
