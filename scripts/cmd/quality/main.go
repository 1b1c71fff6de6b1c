// Command quality measures how good each scheduler's placements are (make
// quality): the spread of identical pods after a fast scale-up
// (kubernetes/kubernetes#130692), and bin packing with NodeResourcesFit
// MostAllocated against the lower bound and first-fit-decreasing, with the
// time to place beside them. It runs chapters 03 on (their scoring
// strategy: 03-09 have only LeastAllocated), chapter 10 with power-of-two
// choices, kube-scheduler with its defaults and kube-scheduler configured
// like 10, on one local cluster. It prints the tables, writes the runs to
// JSON, and with --docs regenerates docs/quality.md.
//
//	go run ./scripts/cmd/quality            # defaults, median of 3
//	go run ./scripts/cmd/quality --tiny     # what make test runs
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"minisched/scripts/bench"
	"minisched/scripts/cluster"
	"minisched/scripts/docsgen"
	"minisched/scripts/e2e"
)

// The first chapter that scores nodes, and the first that can pack
// (--scoring-strategy) and sample (--power-of-two-choices).
const (
	firstScoringChapter = 3
	searchChapter       = e2e.SearchChapter
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quality: "+err.Error())
		os.Exit(1)
	}
}

type options struct {
	root, tools, chapters, out string
	cfg                        bench.QualityConfig
	runs                       int
	tiny, docs                 bool
}

// entry is one scheduler under test with the scoring strategy of each
// workload.
type entry struct {
	target          bench.Target
	spread, packing string
	chapter, upLike int
	power, upstream bool
}

func run() error {
	o := options{
		cfg:  bench.QualityConfig{SpreadNodes: 300, SpreadPods: 3000, PackNodes: 200, Seed: 1, Cap: 5 * time.Minute, QPS: 5000, Burst: 5000},
		runs: 3,
	}
	flag.StringVar(&o.root, "root", ".", "repository root")
	flag.StringVar(&o.tools, "tools", ".cache/tools", "tools directory (see scripts/build-tools.sh)")
	flag.StringVar(&o.chapters, "chapters", "", "comma-separated chapter numbers, 03 on (default: every chapter from 03)")
	flag.StringVar(&o.out, "out", ".cache/quality", "directory for the cluster's files, the logs and results.json")
	flag.IntVar(&o.cfg.SpreadNodes, "spread-nodes", o.cfg.SpreadNodes, "spread: nodes")
	flag.IntVar(&o.cfg.SpreadPods, "spread-pods", o.cfg.SpreadPods, "spread: identical pods created at once")
	flag.IntVar(&o.cfg.PackNodes, "pack-nodes", o.cfg.PackNodes, "bin packing: nodes")
	flag.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "bin packing: seed of the pods' sizes")
	flag.DurationVar(&o.cfg.Cap, "cap", o.cfg.Cap, "a scheduler that has not placed a workload's pods by then is DNF")
	qps := flag.Float64("qps", float64(o.cfg.QPS), "client QPS of every scheduler")
	flag.IntVar(&o.cfg.Burst, "burst", o.cfg.Burst, "client burst of every scheduler")
	flag.IntVar(&o.runs, "runs", o.runs, "runs of everything; the report takes the median")
	flag.BoolVar(&o.tiny, "tiny", false, "a tiny run (a few nodes and pods, one run, race-detector builds, chapter 03 and the newest only) that checks the harness, as make test runs it")
	flag.BoolVar(&o.docs, "docs", false, "write docs/data/quality.{json,md,svg} and regenerate docs/quality.md")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	o.cfg.QPS = float32(*qps)
	if o.tiny {
		o.cfg = bench.QualityConfig{SpreadNodes: 10, SpreadPods: 60, PackNodes: 6, Seed: 1, Cap: time.Minute, QPS: o.cfg.QPS, Burst: o.cfg.Burst}
		o.runs = 1
		if o.docs {
			return fmt.Errorf("--tiny and --docs: a tiny run's figures are not for the docs")
		}
	}
	if o.cfg.SpreadNodes < 1 || o.cfg.SpreadPods < 1 || o.cfg.PackNodes < 2 || o.cfg.Cap <= 0 || o.cfg.QPS <= 0 || o.cfg.Burst < 1 || o.runs < 1 {
		return fmt.Errorf("need --spread-nodes, --spread-pods, --runs, --qps and --burst ≥ 1, --pack-nodes ≥ 2, --cap > 0")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := measure(ctx, o)
	if err != nil {
		return err
	}
	fmt.Print(rep.Markdown("quality.svg"))
	if o.tiny {
		return checkTiny(rep)
	}
	if o.docs {
		return writeDocs(o.root, rep)
	}
	return nil
}

func measure(ctx context.Context, o options) (*bench.QualityReport, error) {
	found, err := e2e.FindChapters(o.root)
	if err != nil {
		return nil, err
	}
	var scoring []e2e.Chapter
	for _, c := range found {
		// Chapter 13 is kube-scheduler itself: make quality measures
		// kube-scheduler already (the upstream entries below).
		if c.Number >= firstScoringChapter && c.Number != e2e.PluginsChapter {
			scoring = append(scoring, c)
		}
	}
	if len(scoring) == 0 {
		return nil, fmt.Errorf("no chapter from %02d on", firstScoringChapter)
	}
	chapters, err := e2e.SelectChapters(scoring, o.chapters)
	if err != nil {
		return nil, fmt.Errorf("%w (make quality runs chapters %02d on)", err, firstScoringChapter)
	}
	if o.tiny && o.chapters == "" {
		// The harness, not the chapters, is under test: the first and the
		// newest chapter check it.
		chapters = []e2e.Chapter{chapters[0], chapters[len(chapters)-1]}
	}
	dir, err := filepath.Abs(filepath.Join(o.out, time.Now().Format("20060102-150405")))
	if err != nil {
		return nil, err
	}
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, err
	}
	client := e2e.Client{QPS: o.cfg.QPS, Burst: o.cfg.Burst}
	rate := []string{fmt.Sprintf("--kube-api-qps=%g", client.QPS), fmt.Sprintf("--kube-api-burst=%d", client.Burst)}
	var entries []entry
	for _, c := range chapters {
		fmt.Fprintf(os.Stderr, "building %s (race detector: %v)\n", c.Dir, o.tiny)
		bin, err := e2e.BuildChapterWith(o.root, c, binDir, o.tiny)
		if err != nil {
			return nil, err
		}
		sched := &e2e.Scheduler{Chapter: c.Number, Label: c.Dir, Command: []string{bin}}
		if c.Number < searchChapter {
			entries = append(entries, entry{target: bench.Target{Name: c.Dir, Sched: sched, Extra: rate}, spread: "LeastAllocated", packing: "LeastAllocated", chapter: c.Number})
			continue
		}
		entries = append(entries, entry{target: bench.Target{Name: c.Dir, Sched: sched, Extra: rate}, spread: "LeastAllocated", packing: "MostAllocated", chapter: c.Number})
		p2 := append([]string{"--power-of-two-choices"}, rate...)
		entries = append(entries, entry{target: bench.Target{Name: c.Dir + " (power of two choices)", Sched: sched, Extra: p2}, spread: "LeastAllocated", packing: "MostAllocated", chapter: c.Number, power: true})
	}
	for _, like := range []int{0, searchChapter} {
		entries = append(entries, entry{spread: "LeastAllocated", packing: "MostAllocated", upstream: true, upLike: like})
	}

	fmt.Fprintln(os.Stderr, "starting the local cluster")
	cl, err := cluster.Start(ctx, cluster.Options{ToolsDir: o.tools, Dir: filepath.Join(dir, "cluster")})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := cl.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}()
	cl.Config.QPS, cl.Config.Burst = 5000, 5000
	env := &bench.Env{Cluster: cl, Client: kubernetes.NewForConfigOrDie(cl.Config), LogDir: dir}

	rep := &bench.QualityReport{Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Machine: docsgen.Machine(), Runs: o.runs, Config: o.cfg}
	for run := 1; run <= o.runs; run++ {
		var results []bench.QualityResult
		for _, workload := range []string{bench.Spread, bench.PackHalf, bench.PackFull} {
			for _, en := range entries {
				strategy := en.spread
				if workload != bench.Spread {
					strategy = en.packing
				}
				t, err := en.targetFor(o.tools, dir, strategy, client)
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(os.Stderr, "run %d/%d: %s, %s (%s)\n", run, o.runs, workload, t.Name, strategy)
				r, err := env.RunQuality(ctx, workload, t, strategy, o.cfg, run)
				if err != nil {
					return nil, fmt.Errorf("%s, %s: %w (logs in %s)", workload, t.Name, err, dir)
				}
				results = append(results, r)
			}
		}
		rep.Results = append(rep.Results, results)
	}
	rep.Median = bench.MedianQuality(rep.Results)
	newest := chapters[len(chapters)-1]
	if newest.Number >= searchChapter {
		rep.Targets = bench.JudgeQuality(rep.Median, newest.Dir, newest.Dir+" (power of two choices)")
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "results.json")
	fmt.Fprintln(os.Stderr, "results:", path)
	return rep, os.WriteFile(path, append(data, '\n'), 0o644)
}

// targetFor returns the entry's target for a workload's strategy: a
// chapter from 10 on packs with --scoring-strategy; kube-scheduler gets a
// configuration of its own per strategy.
func (en entry) targetFor(tools, dir, strategy string, client e2e.Client) (bench.Target, error) {
	if en.upstream {
		s, err := e2e.UpstreamQuality(tools, dir, en.upLike, strategy, client)
		return bench.Target{Name: s.Label, Sched: &s}, err
	}
	t := en.target
	if en.chapter >= searchChapter {
		t.Extra = append([]string{"--scoring-strategy=" + strategy}, t.Extra...)
	}
	return t, nil
}

// checkTiny checks what a tiny run can: every scheduler placed the spread
// and the half-full packing entirely, and the measures hold together.
func checkTiny(rep *bench.QualityReport) error {
	var problems []string
	for _, r := range rep.Median {
		switch {
		case r.DNF:
			problems = append(problems, fmt.Sprintf("%s, %s: did not finish", r.Workload, r.Name))
		case r.Workload != bench.PackFull && r.Pending > 0:
			problems = append(problems, fmt.Sprintf("%s, %s: %d pods pending, though every pod fits", r.Workload, r.Name, r.Pending))
		case r.Scheduled+r.Pending != r.Pods:
			problems = append(problems, fmt.Sprintf("%s, %s: %d scheduled and %d pending of %d pods", r.Workload, r.Name, r.Scheduled, r.Pending, r.Pods))
		case r.Workload != bench.Spread && (r.NodesUsed < r.LowerBound || r.FFDNodes < r.LowerBound):
			problems = append(problems, fmt.Sprintf("%s, %s: %d nodes used and %d for first-fit-decreasing, below the lower bound %d", r.Workload, r.Name, r.NodesUsed, r.FFDNodes, r.LowerBound))
		case r.Scheduled > 0 && r.Seconds <= 0:
			problems = append(problems, fmt.Sprintf("%s, %s: no time to place", r.Workload, r.Name))
		}
	}
	if len(rep.Targets) == 0 {
		problems = append(problems, "no target was judged: the newest chapter is not in the run")
	}
	if len(problems) > 0 {
		return fmt.Errorf("the tiny run found %d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	fmt.Println("the quality harness works: every scheduler placed every pod that fits")
	return nil
}

func writeDocs(root string, rep *bench.QualityReport) error {
	dir := filepath.Join(root, "docs", "data")
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"quality.json": append(data, '\n'),
		"quality.md":   []byte(rep.Markdown("data/quality.svg")),
		"quality.svg":  []byte(rep.SVG()),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	page := filepath.Join(root, "docs", "quality.md")
	text, err := os.ReadFile(page)
	if err != nil {
		return err
	}
	rendered, err := docsgen.Render(root, filepath.Dir(page), text)
	if err != nil {
		return err
	}
	fmt.Println("wrote docs/data/quality.{json,md,svg} and", page)
	return os.WriteFile(page, rendered, 0o644)
}
