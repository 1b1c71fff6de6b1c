// Command bench measures every chapter and kube-scheduler v1.37.1 side by
// side on one local cluster (make bench): SchedulingBasic throughput as
// upstream scheduler_perf measures it, the raw bind ceiling, the attempts
// each queue wastes on the requeue workload, and from chapter 09 on
// scheduler_perf's PreemptionBasic and PreemptionAsync beside kube-scheduler
// configured like 09, and from chapter 11 on scheduler_perf's
// GangScheduling beside kube-scheduler configured like 11. It prints the
// tables,
// writes the runs to JSON, and with --docs regenerates docs/benchmarks.md.
//
//	go run ./scripts/cmd/bench                    # defaults, a few minutes
//	go run ./scripts/cmd/bench --nodes 5000 --pods 10000 --cap 10m
//	go run ./scripts/cmd/bench --tiny             # what make test runs
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"minisched/scripts/bench"
	"minisched/scripts/cluster"
	"minisched/scripts/docsgen"
	"minisched/scripts/e2e"
)

// firstRequeueChapter is the first chapter with a scheduling queue: before
// it there is nothing to requeue.
const firstRequeueChapter = 6

// firstTracingChapter is the first chapter with --trace-file: the full run
// measures it with the trace on too.
const firstTracingChapter = 12

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench: "+err.Error())
		os.Exit(1)
	}
}

type options struct {
	root, tools, chapters, out string
	basic                      bench.Config
	requeue                    bench.RequeueConfig
	preemption                 bench.PreemptionConfig
	gang                       bench.GangConfig
	runs                       int
	tiny, docs                 bool
	// preemptionOnly runs only PreemptionBasic and PreemptionAsync, and
	// with docs writes only their page data.
	preemptionOnly bool
	// gangOnly runs only GangScheduling (chapters 11 on and kube-scheduler
	// like 11), and with docs writes only its page data.
	gangOnly bool
	// basicOnly runs only SchedulingBasic, without the bind ceiling and
	// kube-scheduler like 08: the chapters, kube-scheduler with its
	// defaults and, with chapter 10 on, kube-scheduler like 10 (the
	// 5,000-node comparison of docs/10-percentage-of-nodes-to-score.md).
	basicOnly bool
	// profile is the chapter whose measured phase is profiled in one more
	// SchedulingBasic run, not counted in the medians.
	profile int
	// large is SchedulingBasic at scheduler_perf's largest size, run in
	// the same make bench for 08, the chapters from 10 on and
	// kube-scheduler, so that every figure of the docs comes from one run
	// on one machine; Nodes 0 leaves it out. largeProfile is the chapter
	// profiled once more at that size.
	large        bench.Config
	largeProfile int
	// resume continues the full run (--docs) whose directory it names,
	// from its results.partial.json: the rounds it finished are kept, the
	// others run, on a fresh cluster. A run of some hours can then be
	// made in parts on a machine that is not always up.
	resume string
	// profileWindow, with --preemption-only or --gang-only, profiles each
	// run's first profileWindow of its measured phase, kube-scheduler's
	// too, and prints each profile's pprof -top.
	profileWindow time.Duration
}

// onlyTarget builds a chapter for --preemption-only or --gang-only: with
// the profiling hook when --profile-window asks for profiles.
func onlyTarget(o options, c e2e.Chapter, binDir string, rate []string) (bench.Target, error) {
	if o.profileWindow == 0 {
		bin, err := e2e.BuildChapterWith(o.root, c, binDir, o.tiny)
		if err != nil {
			return bench.Target{}, err
		}
		return bench.Target{Name: c.Dir, Sched: &e2e.Scheduler{Chapter: c.Number, Label: c.Dir, Command: []string{bin}}, Extra: rate}, nil
	}
	bin, err := bench.BuildProfiled(o.root, c, binDir, o.tiny)
	if err != nil {
		return bench.Target{}, err
	}
	path := filepath.Join(binDir, c.Dir+".cpu.pprof")
	s := bench.ProfiledScheduler(c, bin, path)
	s.Label = c.Dir
	return bench.Target{Name: c.Dir, Sched: &s, Extra: rate, Profile: path}, nil
}

// printProfile prints the pprof -top of a run's profile, if it has one,
// and keeps it beside the profile.
func printProfile(t bench.Target, r bench.Result, window time.Duration) error {
	if r.Profile == "" {
		return nil
	}
	// The binary resolves the profile's symbols: env's last argument for
	// a chapter built with the hook, the first for kube-scheduler.
	bin := t.Sched.Command[0]
	if !t.Sched.IsKubeScheduler() {
		bin = t.Sched.Command[len(t.Sched.Command)-1]
	}
	top, err := bench.TopFunctions(bin, r.Profile, 40)
	if err != nil {
		return err
	}
	if err := os.WriteFile(strings.TrimSuffix(r.Profile, ".pprof")+".top.txt", top, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "CPU profile of %s, the first %s measured: %s\n%s", t.Name, window, r.Profile, top)
	return nil
}

// largeChapter says whether a chapter runs at the large size: 08 scores
// every node, and from 10 on the search stops once enough nodes fit.
func largeChapter(n int) bool { return n == 8 || n >= e2e.SearchChapter }

func run() error {
	o := options{
		basic:   bench.Config{Nodes: 100, InitPods: 100, Pods: 2000, Cap: 30 * time.Second, QPS: 5000, Burst: 5000},
		requeue: bench.RequeueConfig{Nodes: 10, Pods: 100, Rounds: 5, Pause: time.Second, Cap: time.Minute},
		// scheduler_perf's PreemptionBasic 1000Nodes (1,000 nodes, 4,000
		// low-priority pods, 1,000 preemptors), and PreemptionAsync
		// (default_preemption/performance-config.yaml) between its 500Nodes
		// and 5000Nodes sizes: 1,000 nodes and 3,000 measured pods, so that
		// the measured phase lasts some fifteen one-second samples rather
		// than four. The nodes' free room holds 4,000; a preemptor takes a
		// node's every 200 ms, a hundred in twenty seconds, and the room
		// left still holds them all.
		preemption: bench.PreemptionConfig{Nodes: 1000, Pods: 1000, AsyncNodes: 1000, AsyncPods: 3000, Interval: 200 * time.Millisecond, Cap: 3 * time.Minute},
		// scheduler_perf's 5000Nodes_1000Gangs_3000Pods
		// (podgroup/gangscheduling/performance-config.yaml).
		gang:    bench.GangConfig{Nodes: 5000, Groups: 1000, PodsPerGroup: 3, Cap: 3 * time.Minute},
		runs:    3,
		profile: 8,
		// scheduler_perf's SchedulingBasic 5000Nodes_10000Pods.
		large:        bench.Config{Workload: "large", Nodes: 5000, InitPods: 1000, Pods: 10000, Cap: 5 * time.Minute, QPS: 5000, Burst: 5000},
		largeProfile: e2e.SearchChapter,
	}
	flag.StringVar(&o.root, "root", ".", "repository root")
	flag.StringVar(&o.tools, "tools", ".cache/tools", "tools directory (see scripts/build-tools.sh)")
	flag.StringVar(&o.chapters, "chapters", "", "comma-separated chapter numbers (default: every chapter present)")
	flag.StringVar(&o.out, "out", ".cache/bench", "directory for the cluster's files, the logs and results.json")
	flag.IntVar(&o.basic.Nodes, "nodes", o.basic.Nodes, "SchedulingBasic: nodes")
	flag.IntVar(&o.basic.InitPods, "init-pods", o.basic.InitPods, "SchedulingBasic: pods scheduled before measuring")
	flag.IntVar(&o.basic.Pods, "pods", o.basic.Pods, "SchedulingBasic: measured pods")
	flag.DurationVar(&o.basic.Cap, "cap", o.basic.Cap, "SchedulingBasic: a scheduler that has not scheduled the measured pods by then is DNF")
	qps := flag.Float64("qps", float64(o.basic.QPS), "client QPS of every scheduler and of the bind ceiling (scheduler_perf uses 5000)")
	flag.IntVar(&o.basic.Burst, "burst", o.basic.Burst, "client burst of every scheduler and of the bind ceiling")
	flag.IntVar(&o.requeue.Nodes, "requeue-nodes", o.requeue.Nodes, "requeue: nodes at the start")
	flag.IntVar(&o.requeue.Pods, "requeue-pods", o.requeue.Pods, "requeue: pods waiting for the label")
	flag.IntVar(&o.requeue.Rounds, "rounds", o.requeue.Rounds, "requeue: rounds of changes that do not help")
	flag.IntVar(&o.preemption.Nodes, "preemption-nodes", o.preemption.Nodes, "PreemptionBasic: nodes, each with four low-priority pods")
	flag.IntVar(&o.preemption.Pods, "preemption-pods", o.preemption.Pods, "PreemptionBasic: measured pods, each a preemptor (at most one per node)")
	flag.IntVar(&o.preemption.AsyncNodes, "async-nodes", o.preemption.AsyncNodes, "PreemptionAsync: nodes, each with four low-priority pods")
	flag.IntVar(&o.preemption.AsyncPods, "async-pods", o.preemption.AsyncPods, "PreemptionAsync: measured pods of 100m (at most four per node)")
	flag.IntVar(&o.gang.Nodes, "gang-nodes", o.gang.Nodes, "GangScheduling: nodes")
	flag.IntVar(&o.gang.Groups, "gangs", o.gang.Groups, "GangScheduling: pod groups, each a gang")
	flag.IntVar(&o.gang.PodsPerGroup, "pods-per-gang", o.gang.PodsPerGroup, "GangScheduling: members of each gang, and its minCount")
	flag.IntVar(&o.large.Nodes, "large-nodes", o.large.Nodes, "SchedulingBasic at the large size (08, 10 on, kube-scheduler): nodes; 0 leaves the large size out")
	flag.IntVar(&o.large.InitPods, "large-init-pods", o.large.InitPods, "SchedulingBasic at the large size: init pods")
	flag.IntVar(&o.large.Pods, "large-pods", o.large.Pods, "SchedulingBasic at the large size: measured pods")
	flag.DurationVar(&o.large.Cap, "large-cap", o.large.Cap, "SchedulingBasic at the large size: cap")
	flag.IntVar(&o.runs, "runs", o.runs, "runs of everything; the report takes the median")
	flag.IntVar(&o.profile, "profile", o.profile, "chapter to profile in one more SchedulingBasic run (pprof -top goes to the report); 0 for none")
	flag.BoolVar(&o.tiny, "tiny", false, "a tiny run (a few nodes and pods, one run, race-detector builds) that checks the harness, as make test runs it")
	flag.BoolVar(&o.preemptionOnly, "preemption-only", false, "run only PreemptionBasic and PreemptionAsync (chapters 09 on and kube-scheduler like 09); not with --docs")
	flag.BoolVar(&o.gangOnly, "gang-only", false, "run only GangScheduling (chapters 11 on and kube-scheduler like 11); not with --docs")
	flag.BoolVar(&o.basicOnly, "basic-only", false, "run only SchedulingBasic, with kube-scheduler's defaults and, from chapter 10 on, kube-scheduler like 10 as references (no bind ceiling, no kube-scheduler like 08); not with --docs")
	flag.DurationVar(&o.profileWindow, "profile-window", 0, "with --preemption-only or --gang-only: CPU-profile every scheduler, kube-scheduler too, for the first DURATION of each run's measured phase, and print each profile's pprof -top (the profiles stay beside the logs)")
	docsFrom := flag.String("docs-from", "", "write the docs' tables from a run's results.json, measuring nothing: the figures stay that run's (the profiles it wrote are kept)")
	flag.StringVar(&o.resume, "resume", "", "with --docs: continue the run in this directory (.cache/bench/DATE) from its results.partial.json, keeping the rounds it finished")
	flag.BoolVar(&o.docs, "docs", false, "write every table to docs/data/bench*.{json,md,svg,txt} and regenerate docs/benchmarks.md (every chapter, every workload, one run)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	if *docsFrom != "" {
		data, err := os.ReadFile(*docsFrom)
		if err != nil {
			return err
		}
		var rep bench.Report
		if err := json.Unmarshal(data, &rep); err != nil {
			return fmt.Errorf("%s: %w", *docsFrom, err)
		}
		if len(rep.BasicMedian) == 0 {
			return fmt.Errorf("%s holds no SchedulingBasic medians: not a full run", *docsFrom)
		}
		chapters, err := e2e.FindChapters(o.root)
		if err != nil {
			return err
		}
		rep.Targets = judge(&rep, chapters, true, true)
		return writeDocs(o.root, &rep, nil, nil)
	}
	o.basic.QPS = float32(*qps)
	o.large.QPS, o.large.Burst = o.basic.QPS, o.basic.Burst
	if o.basicOnly || o.preemptionOnly || o.gangOnly {
		o.large.Nodes = 0
	}
	if o.basicOnly && (o.docs || o.preemptionOnly || o.gangOnly) {
		return fmt.Errorf("--basic-only goes with neither --docs, --preemption-only nor --gang-only")
	}
	if o.preemptionOnly && o.gangOnly {
		return fmt.Errorf("--preemption-only and --gang-only: choose one")
	}
	if o.profileWindow != 0 && (o.profileWindow < time.Second || !(o.preemptionOnly || o.gangOnly)) {
		return fmt.Errorf("--profile-window needs --preemption-only or --gang-only, and a window of a second or more")
	}
	if o.docs && (o.preemptionOnly || o.gangOnly || o.chapters != "") {
		// Every figure of the docs comes from one run on one machine.
		return fmt.Errorf("--docs writes every table from one run of every chapter: not with --preemption-only, --gang-only or --chapters")
	}
	if o.tiny {
		o.basic = bench.Config{Nodes: 3, InitPods: 3, Pods: 20, Cap: time.Minute, QPS: o.basic.QPS, Burst: o.basic.Burst}
		o.requeue = bench.RequeueConfig{Nodes: 2, Pods: 10, Rounds: 2, Pause: 500 * time.Millisecond, Cap: time.Minute}
		o.preemption = bench.PreemptionConfig{Nodes: 3, Pods: 3, AsyncNodes: 3, AsyncPods: 6, Interval: 200 * time.Millisecond, Cap: time.Minute}
		o.gang = bench.GangConfig{Nodes: 3, Groups: 4, PodsPerGroup: 3, Cap: time.Minute}
		// The large size runs the same SchedulingBasic code as the
		// default size, which the tiny run checks.
		o.large.Nodes = 0
		o.runs = 1
		if o.docs {
			return fmt.Errorf("--tiny and --docs: a tiny run's figures are not for the docs")
		}
	}
	if o.basic.Nodes < 1 || o.basic.InitPods < 0 || o.basic.Pods < 1 || o.basic.Cap <= 0 || o.basic.QPS <= 0 || o.basic.Burst < 1 ||
		o.requeue.Nodes < 1 || o.requeue.Pods < 1 || o.requeue.Rounds < 0 || o.runs < 1 || o.preemption.Nodes < 1 || o.preemption.Pods < 1 || o.preemption.AsyncNodes < 1 || o.preemption.AsyncPods < 1 ||
		o.gang.Nodes < 1 || o.gang.Groups < 1 || o.gang.PodsPerGroup < 1 ||
		o.large.Nodes < 0 || (o.large.Nodes > 0 && (o.large.InitPods < 0 || o.large.Pods < 1 || o.large.Cap <= 0)) {
		return fmt.Errorf("need --nodes, --pods, --requeue-nodes, --requeue-pods, --preemption-nodes, --preemption-pods, --gang-nodes, --gangs, --pods-per-gang, --runs, --qps and --burst ≥ 1, --init-pods and --rounds ≥ 0, --cap > 0")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, top, largeTop, err := measure(ctx, o)
	if err != nil {
		return err
	}
	printReport(rep)
	if top != nil {
		fmt.Printf("CPU profile of the measured phase, %s:\n%s", rep.Profiled.Name, top)
	}
	if largeTop != nil {
		fmt.Printf("CPU profile of the measured phase at %d nodes, %s:\n%s", rep.Large.Nodes, rep.LargeProfiled.Name, largeTop)
	}
	if o.tiny {
		return checkTiny(rep, top)
	}
	if o.docs {
		return writeDocs(o.root, rep, top, largeTop)
	}
	return nil
}

// measure builds the chapters, starts the cluster, and runs every target
// o.runs times, the targets of a run one after the other; then the
// profiled chapter once more, whose pprof -top it returns.
func measure(ctx context.Context, o options) (rep *bench.Report, top, largeTop []byte, err error) {
	found, err := e2e.FindChapters(o.root)
	if err != nil {
		return nil, nil, nil, err
	}
	chapters, err := e2e.SelectChapters(found, o.chapters)
	if err != nil {
		return nil, nil, nil, err
	}
	if o.tiny && o.chapters == "" && len(chapters) > 2 {
		// The harness, not the chapters, is under test: the first chapter
		// and the newest (which has a queue and preempts) run every
		// workload and the profiled run; make e2e tests the others.
		chapters = []e2e.Chapter{chapters[0], chapters[len(chapters)-1]}
		if o.profile != 0 {
			o.profile = chapters[1].Number
		}
	}
	dir, err := filepath.Abs(filepath.Join(o.out, time.Now().Format("20060102-150405")))
	if err != nil {
		return nil, nil, nil, err
	}
	var resumed *bench.Report
	if o.resume != "" {
		if dir, err = filepath.Abs(o.resume); err != nil {
			return nil, nil, nil, err
		}
		if resumed, err = readPartial(dir, o); err != nil {
			return nil, nil, nil, err
		}
		// The cluster is a fresh one: each run sets up its own nodes.
		_ = os.RemoveAll(filepath.Join(dir, "cluster"))
	}
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	client := e2e.Client{QPS: o.basic.QPS, Burst: o.basic.Burst}
	rate := []string{fmt.Sprintf("--kube-api-qps=%g", client.QPS), fmt.Sprintf("--kube-api-burst=%d", client.Burst)}
	var basicTargets, requeueTargets, preemptionTargets, gangTargets, largeTargets []bench.Target
	var profiled, largeProfiled *bench.Target
	var profiledBin, largeProfiledBin string
	if !o.preemptionOnly && !o.basicOnly && !o.gangOnly {
		basicTargets = append(basicTargets, bench.Target{Name: bench.Ceiling})
	}
	for _, c := range chapters {
		if c.Number == e2e.PluginsChapter {
			// Chapter 13 is kube-scheduler with its plugins: it runs
			// SchedulingBasic, at both sizes, with the defaults and
			// NodeCost, beside kube-scheduler's defaults, which it should
			// match within noise (NodeCost scores no pod of the workload).
			if o.gangOnly || o.preemptionOnly {
				continue
			}
			fmt.Fprintf(os.Stderr, "building %s (race detector: %v)\n", c.Dir, o.tiny)
			bin, err := e2e.BuildChapterWith(o.root, c, binDir, o.tiny)
			if err != nil {
				return nil, nil, nil, err
			}
			s, err := e2e.PluginsScheduler(o.root, dir, bin, e2e.DefaultPluginsConfig, client)
			if err != nil {
				return nil, nil, nil, err
			}
			t := bench.Target{Name: s.Label, Sched: &s}
			basicTargets = append(basicTargets, t)
			if o.large.Nodes > 0 {
				largeTargets = append(largeTargets, t)
			}
			continue
		}
		if o.gangOnly || o.preemptionOnly {
			first, targets := e2e.PreemptionChapter, &preemptionTargets
			if o.gangOnly {
				first, targets = e2e.PodGroupChapter, &gangTargets
			}
			if c.Number < first {
				continue
			}
			t, err := onlyTarget(o, c, binDir, rate)
			if err != nil {
				return nil, nil, nil, err
			}
			*targets = append(*targets, t)
			continue
		}
		// The race detector makes a scheduler several times slower: the
		// tiny run checks the harness (with it), the full run measures.
		fmt.Fprintf(os.Stderr, "building %s (race detector: %v)\n", c.Dir, o.tiny)
		bin, err := e2e.BuildChapterWith(o.root, c, binDir, o.tiny)
		if err != nil {
			return nil, nil, nil, err
		}
		t := bench.Target{Name: c.Dir, Sched: &e2e.Scheduler{Chapter: c.Number, Label: c.Dir, Command: []string{bin}}, Extra: rate}
		basicTargets = append(basicTargets, t)
		if c.Number == firstTracingChapter {
			// Once more with its trace on: the two rows, and this one
			// against the chapter before it, say what tracing costs, on
			// and off (bench.JudgeTrace).
			traced := t
			traced.Name = c.Dir + bench.TracedSuffix
			traced.Extra = append(slices.Clone(rate), "--trace-file="+filepath.Join(dir, c.Dir+".trace"))
			basicTargets = append(basicTargets, traced)
		}
		if c.Number == o.profile {
			pbin, err := bench.BuildProfiled(o.root, c, binDir, o.tiny)
			if err != nil {
				return nil, nil, nil, err
			}
			s := bench.ProfiledScheduler(c, pbin, filepath.Join(dir, c.Dir+".cpu.pprof"))
			profiled = &bench.Target{Name: s.Label, Sched: &s, Extra: rate, Profile: filepath.Join(dir, c.Dir+".cpu.pprof")}
			profiledBin = pbin
		}
		if o.large.Nodes > 0 && largeChapter(c.Number) {
			largeTargets = append(largeTargets, t)
			if c.Number == o.largeProfile {
				pbin, err := bench.BuildProfiled(o.root, c, binDir, o.tiny)
				if err != nil {
					return nil, nil, nil, err
				}
				pprof := filepath.Join(dir, c.Dir+".large.cpu.pprof")
				s := bench.ProfiledScheduler(c, pbin, pprof)
				largeProfiled = &bench.Target{Name: s.Label, Sched: &s, Extra: rate, Profile: pprof}
				largeProfiledBin = pbin
			}
		}
		if c.Number >= firstRequeueChapter && !o.basicOnly {
			requeueTargets = append(requeueTargets, t)
		}
		if c.Number >= e2e.PreemptionChapter && !o.basicOnly {
			preemptionTargets = append(preemptionTargets, t)
		}
		if c.Number >= e2e.PodGroupChapter && !o.basicOnly {
			gangTargets = append(gangTargets, t)
		}
	}
	if len(gangTargets) > 0 {
		like11, err := e2e.UpstreamBenchLike(o.tools, dir, e2e.PodGroupChapter, client)
		if err != nil {
			return nil, nil, nil, err
		}
		gangTargets = append(gangTargets, bench.Target{Name: like11.Label, Sched: &like11})
	}
	if len(preemptionTargets) > 0 {
		like09, err := e2e.UpstreamBenchLike(o.tools, dir, e2e.PreemptionChapter, client)
		if err != nil {
			return nil, nil, nil, err
		}
		preemptionTargets = append(preemptionTargets, bench.Target{Name: like09.Label, Sched: &like09})
	}
	if !o.preemptionOnly && !o.gangOnly {
		like08, defaults, err := e2e.UpstreamBenchSchedulers(o.tools, dir, client)
		if err != nil {
			return nil, nil, nil, err
		}
		references := []e2e.Scheduler{like08, defaults}
		if o.basicOnly {
			references = references[1:]
		}
		for _, s := range references {
			t := bench.Target{Name: s.Label, Sched: &s}
			basicTargets = append(basicTargets, t)
			if !o.basicOnly {
				requeueTargets = append(requeueTargets, t)
			}
			if len(largeTargets) > 0 && s.Label == bench.UpstreamDefaults {
				largeTargets = append(largeTargets, t)
			}
		}
		if chapterDir(chapters, e2e.SearchChapter) != "" {
			like10, err := e2e.UpstreamBenchLike(o.tools, dir, e2e.SearchChapter, client)
			if err != nil {
				return nil, nil, nil, err
			}
			t := bench.Target{Name: like10.Label, Sched: &like10}
			basicTargets = append(basicTargets, t)
			if len(largeTargets) > 0 {
				largeTargets = append(largeTargets, t)
			}
		}
	}

	fmt.Fprintln(os.Stderr, "starting the local cluster")
	cl, err := cluster.Start(ctx, cluster.Options{ToolsDir: o.tools, Dir: filepath.Join(dir, "cluster")})
	if err != nil {
		return nil, nil, nil, err
	}
	defer func() {
		if err := cl.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}()
	// The driver creates and lists faster than any scheduler binds.
	cl.Config.QPS, cl.Config.Burst = 5000, 5000
	env := &bench.Env{Cluster: cl, Client: kubernetes.NewForConfigOrDie(cl.Config), LogDir: dir, ProfileWindow: o.profileWindow}

	rep = &bench.Report{Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Machine: docsgen.Machine(), Runs: o.runs, Basic: o.basic, Requeue: o.requeue, Preemption: o.preemption, Gang: o.gang, Large: o.large}
	firstRound, firstLargeRound := 1, 1
	if resumed != nil {
		rep = resumed
		rep.Resumed = append(rep.Resumed, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
		firstRound, firstLargeRound = len(rep.BasicRuns)+1, len(rep.LargeRuns)+1
		fmt.Fprintf(os.Stderr, "resuming the run of %s in %s: %d of %d rounds done, %d of %d at %d nodes\n", rep.Date, dir, firstRound-1, o.runs, firstLargeRound-1, o.runs, o.large.Nodes)
	}
	for run := firstRound; run <= o.runs; run++ {
		var basic []bench.Result
		for _, t := range basicTargets {
			fmt.Fprintf(os.Stderr, "run %d/%d: SchedulingBasic, %s\n", run, o.runs, t.Name)
			r, err := env.RunSchedulingBasic(ctx, t, o.basic, run)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("SchedulingBasic, %s: %w (logs in %s)", t.Name, err, dir)
			}
			basic = append(basic, r)
		}
		var requeue []bench.RequeueResult
		for _, t := range requeueTargets {
			fmt.Fprintf(os.Stderr, "run %d/%d: requeue, %s\n", run, o.runs, t.Name)
			r, err := env.RunRequeue(ctx, t, o.requeue, run)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("requeue, %s: %w (logs in %s)", t.Name, err, dir)
			}
			requeue = append(requeue, r)
		}
		rep.BasicRuns, rep.RequeueRuns = append(rep.BasicRuns, basic), append(rep.RequeueRuns, requeue)
		for _, w := range []struct {
			name string
			runs *[][]bench.Result
		}{{bench.PreemptionBasic, &rep.PreemptionBasicRuns}, {bench.PreemptionAsync, &rep.PreemptionAsyncRuns}} {
			var results []bench.Result
			for _, t := range preemptionTargets {
				fmt.Fprintf(os.Stderr, "run %d/%d: %s, %s\n", run, o.runs, w.name, t.Name)
				r, err := env.RunPreemption(ctx, w.name, t, o.preemption, run)
				if err != nil {
					return nil, nil, nil, fmt.Errorf("%s, %s: %w (logs in %s)", w.name, t.Name, err, dir)
				}
				if err := printProfile(t, r, o.profileWindow); err != nil {
					return nil, nil, nil, err
				}
				results = append(results, r)
			}
			if len(results) > 0 {
				*w.runs = append(*w.runs, results)
			}
		}
		var gang []bench.Result
		for _, t := range gangTargets {
			fmt.Fprintf(os.Stderr, "run %d/%d: GangScheduling, %s\n", run, o.runs, t.Name)
			r, err := env.RunGangScheduling(ctx, t, o.gang, run)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("GangScheduling, %s: %w (logs in %s)", t.Name, err, dir)
			}
			if err := printProfile(t, r, o.profileWindow); err != nil {
				return nil, nil, nil, err
			}
			gang = append(gang, r)
		}
		if len(gang) > 0 {
			rep.GangRuns = append(rep.GangRuns, gang)
		}
		savePartial(dir, rep)
	}
	if profiled != nil && !o.preemptionOnly && rep.Profiled.Name != "" {
		// Resumed after the profiled run: its profile is on disk.
		if top, err = bench.TopFunctions(profiledBin, profiled.Profile, 40); err != nil {
			return nil, nil, nil, err
		}
	} else if profiled != nil && !o.preemptionOnly {
		fmt.Fprintf(os.Stderr, "SchedulingBasic, %s\n", profiled.Name)
		r, err := env.RunSchedulingBasic(ctx, *profiled, o.basic, 0)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("SchedulingBasic, %s: %w (logs in %s)", profiled.Name, err, dir)
		}
		rep.Profiled = r
		if top, err = bench.TopFunctions(profiledBin, profiled.Profile, 40); err != nil {
			return nil, nil, nil, err
		}
	}
	// The large size comes after every run of the others: its 5,000 nodes
	// and 11,000 pods are the most for the apiserver to clear away, and
	// nothing measured at the default size should run in their wake.
	for run := firstLargeRound; run <= o.runs && len(largeTargets) > 0; run++ {
		var large []bench.Result
		for _, t := range largeTargets {
			fmt.Fprintf(os.Stderr, "run %d/%d: SchedulingBasic at %d nodes, %s\n", run, o.runs, o.large.Nodes, t.Name)
			r, err := env.RunSchedulingBasic(ctx, t, o.large, run)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("SchedulingBasic at %d nodes, %s: %w (logs in %s)", o.large.Nodes, t.Name, err, dir)
			}
			large = append(large, r)
		}
		rep.LargeRuns = append(rep.LargeRuns, large)
		savePartial(dir, rep)
	}
	if largeProfiled != nil {
		fmt.Fprintf(os.Stderr, "SchedulingBasic at %d nodes, %s\n", o.large.Nodes, largeProfiled.Name)
		r, err := env.RunSchedulingBasic(ctx, *largeProfiled, o.large, 0)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("SchedulingBasic at %d nodes, %s: %w (logs in %s)", o.large.Nodes, largeProfiled.Name, err, dir)
		}
		rep.LargeProfiled = r
		if largeTop, err = bench.TopFunctions(largeProfiledBin, largeProfiled.Profile, 40); err != nil {
			return nil, nil, nil, err
		}
	}

	rep.BasicMedian, rep.RequeueMedian = bench.MedianBasic(rep.BasicRuns), bench.MedianRequeue(rep.RequeueRuns)
	if len(rep.LargeRuns) > 0 {
		rep.LargeMedian = bench.MedianBasic(rep.LargeRuns)
	}
	if len(preemptionTargets) > 0 {
		rep.PreemptionBasicMedian, rep.PreemptionAsyncMedian = bench.MedianBasic(rep.PreemptionBasicRuns), bench.MedianBasic(rep.PreemptionAsyncRuns)
		bench.MedianPhases(rep.PreemptionBasicRuns, rep.PreemptionBasicMedian)
		bench.MedianPhases(rep.PreemptionAsyncRuns, rep.PreemptionAsyncMedian)
	}
	if len(gangTargets) > 0 {
		rep.GangMedian = bench.MedianBasic(rep.GangRuns)
	}
	rep.Targets = judge(rep, chapters, !o.preemptionOnly && !o.basicOnly && !o.gangOnly, !o.preemptionOnly && !o.gangOnly)
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, nil, nil, err
	}
	path := filepath.Join(dir, "results.json")
	fmt.Fprintln(os.Stderr, "results:", path)
	return rep, top, largeTop, os.WriteFile(path, append(data, '\n'), 0o644)
}

// readPartial reads a run's results.partial.json to resume it, and checks
// that it is a full run of the same sizes on this machine.
func readPartial(dir string, o options) (*bench.Report, error) {
	data, err := os.ReadFile(filepath.Join(dir, "results.partial.json"))
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("--resume: %s: %w", dir, err)
	}
	switch {
	case !o.docs:
		return nil, errors.New("--resume continues a full run: it goes with --docs")
	case rep.Machine != docsgen.Machine():
		return nil, fmt.Errorf("--resume: %s ran on %s, not on this machine (%s)", dir, rep.Machine, docsgen.Machine())
	case rep.Runs != o.runs || rep.Basic != o.basic || rep.Requeue != o.requeue || rep.Preemption != o.preemption || rep.Gang != o.gang || rep.Large != o.large:
		return nil, fmt.Errorf("--resume: %s ran other sizes or another number of runs than these flags ask", dir)
	}
	return &rep, nil
}

// savePartial writes the runs done so far to results.partial.json after
// each round: a make bench that fails hours in keeps what it measured.
func savePartial(dir string, rep *bench.Report) {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "results.partial.json"), append(data, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: saving the runs so far:", err)
	}
}

// judge checks every target on the report's medians: a run calls it once
// its medians are in, and --docs-from again, so that a saved run's tables
// say what today's checks say of its figures. basic and trace say whether
// the run measured the workloads those targets need.
func judge(rep *bench.Report, chapters []e2e.Chapter, basic, trace bool) []bench.Check {
	var targets []bench.Check
	if basic {
		targets = bench.Judge(rep.BasicMedian, rep.RequeueMedian, chapterDir(chapters, 8), chapterDir(chapters, 6))
	}
	if trace && slices.ContainsFunc(chapters, func(c e2e.Chapter) bool { return c.Number == firstTracingChapter }) {
		targets = append(targets, bench.JudgeTrace(rep.BasicMedian, chapterDir(chapters, firstTracingChapter-1), chapterDir(chapters, firstTracingChapter))...)
	}
	if len(rep.LargeMedian) > 0 {
		// Issue 16 judged chapter 10, the first that stops searching;
		// issue 30 judges chapter 12, with its trace off.
		for _, n := range judged(chapters, e2e.SearchChapter, firstTracingChapter) {
			targets = append(targets, bench.JudgeSearch(rep.LargeMedian, chapterDir(chapters, n), rep.Large.Nodes))
		}
	}
	if len(rep.PreemptionBasicMedian) > 0 || len(rep.PreemptionAsyncMedian) > 0 {
		// Issue 15 judged chapter 09; issue 30 judges chapter 12, after
		// the fixes its traces led to.
		for _, n := range judged(chapters, e2e.PreemptionChapter, firstTracingChapter) {
			targets = append(targets, bench.JudgePreemption(rep.PreemptionBasicMedian, rep.PreemptionAsyncMedian, chapterDir(chapters, n))...)
		}
	}
	if len(rep.GangMedian) > 0 {
		// The last gang target is kube-scheduler configured like 11.
		ref := rep.GangMedian[len(rep.GangMedian)-1].Name
		for _, n := range judged(chapters, e2e.PodGroupChapter, firstTracingChapter) {
			targets = append(targets, bench.JudgeGang(rep.GangMedian, chapterDir(chapters, n), ref))
		}
	}
	return targets
}

// judged returns, of the chapters numbered ns, those that ran: a target
// is judged for each.
func judged(chapters []e2e.Chapter, ns ...int) []int {
	var out []int
	for _, n := range ns {
		if slices.ContainsFunc(chapters, func(c e2e.Chapter) bool { return c.Number == n }) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func chapterDir(chapters []e2e.Chapter, n int) string {
	for _, c := range chapters {
		if c.Number == n {
			return c.Dir
		}
	}
	return fmt.Sprintf("chapter %02d", n)
}

// printThroughput prints one row per scheduler of a throughput workload:
// SchedulingBasic at either size, or GangScheduling.
func printThroughput(rs []bench.Result) {
	row := "%-28s %8s %8s %8s %8s %8s %8s %7s %9s %8s\n"
	fmt.Printf(row, "SCHEDULER", "AVERAGE", "P50", "P90", "P99", "OVERALL", "PODS", "SECONDS", "PEAK RSS", "CPU S")
	for _, r := range rs {
		secs := fmt.Sprintf("%.1f", r.Seconds)
		if r.DNF {
			secs = "DNF"
		}
		fmt.Printf(row, r.Name, fmt.Sprintf("%.1f", r.Throughput.Average), fmt.Sprintf("%.1f", r.Throughput.Perc50), fmt.Sprintf("%.1f", r.Throughput.Perc90),
			fmt.Sprintf("%.1f", r.Throughput.Perc99), fmt.Sprintf("%.1f", r.Overall), fmt.Sprint(r.Scheduled), secs, fmt.Sprintf("%d MiB", r.PeakRSS>>20), fmt.Sprintf("%.1f", r.CPUSeconds))
	}
}

func printReport(rep *bench.Report) {
	fmt.Printf("SchedulingBasic: %d nodes, %d init pods, %d measured pods, QPS %g, burst %d; median of %d runs\n", rep.Basic.Nodes, rep.Basic.InitPods, rep.Basic.Pods, rep.Basic.QPS, rep.Basic.Burst, rep.Runs)
	printThroughput(rep.BasicMedian)
	fmt.Printf("requeue: %d pods, %d nodes, %d rounds of changes that do not help\n", rep.Requeue.Pods, rep.Requeue.Nodes, rep.Requeue.Rounds)
	row := "%-28s %9s %9s %7s %8s\n"
	fmt.Printf(row, "SCHEDULER", "ATTEMPTS", "PER POD", "WASTED", "BOUND")
	for _, r := range rep.RequeueMedian {
		bound := fmt.Sprintf("%d/%d", r.Bound, r.Pods)
		if r.DNF {
			bound += " DNF"
		}
		fmt.Printf(row, r.Name, fmt.Sprint(r.Attempts), fmt.Sprintf("%.2f", r.AttemptsPerPod()), fmt.Sprint(r.Wasted), bound)
	}
	for _, name := range bench.PreemptionWorkloads {
		rs := rep.PreemptionMedians()[name]
		if len(rs) == 0 {
			continue
		}
		nodes, pods := rep.Preemption.Sized(name)
		fmt.Printf("%s: %d nodes with 4 low-priority pods each, %d measured pods; median of %d runs\n", name, nodes, pods, rep.Runs)
		row := "%-28s %8s %8s %8s %8s %8s %10s %22s %26s %22s\n"
		fmt.Printf(row, "SCHEDULER", "AVERAGE", "OVERALL", "PODS", "SECONDS", "CPU S", "PREEMPTORS", "CREATED→NOMINATED MS", "NOMINATED→VICTIMS GONE MS", "VICTIMS GONE→BOUND MS")
		for _, r := range rs {
			secs := fmt.Sprintf("%.1f", r.Seconds)
			if r.DNF {
				secs = "DNF"
			}
			ph := bench.PhaseRow(r)
			fmt.Printf(row, r.Name, fmt.Sprintf("%.1f", r.Throughput.Average), fmt.Sprintf("%.1f", r.Overall), fmt.Sprint(r.Scheduled), secs, fmt.Sprintf("%.1f", r.CPUSeconds), ph[0], ph[1], ph[2], ph[3])
		}
	}
	if len(rep.GangMedian) > 0 {
		fmt.Printf("GangScheduling: %d nodes, %d gangs of %d pods (minCount %d); median of %d runs\n", rep.Gang.Nodes, rep.Gang.Groups, rep.Gang.PodsPerGroup, rep.Gang.PodsPerGroup, rep.Runs)
		printThroughput(rep.GangMedian)
	}
	if len(rep.LargeMedian) > 0 {
		fmt.Printf("SchedulingBasic at %d nodes: %d init pods, %d measured pods; median of %d runs\n", rep.Large.Nodes, rep.Large.InitPods, rep.Large.Pods, rep.Runs)
		printThroughput(rep.LargeMedian)
	}
	for _, c := range rep.Targets {
		met := "MISSED"
		if c.Met {
			met = "met"
		}
		fmt.Printf("target: %s: %s (%s)\n", c.Target, c.Measured, met)
	}
}

// checkTiny fails the tiny run if the harness measured nothing: a profile
// must have been taken, every
// scheduler must have scheduled every measured pod at a rate above zero
// (a tiny run is too short for per-second samples),
// and on the requeue workload have bound every pod in at least two attempts
// each. The targets themselves are never asserted.
func checkTiny(rep *bench.Report, top []byte) error {
	var problems []string
	if rep.Profiled.Name != "" && (rep.Profiled.Scheduled != rep.Basic.Pods || !bytes.Contains(top, []byte("flat%"))) {
		problems = append(problems, fmt.Sprintf("the profiled run scheduled %d of %d pods, and pprof -top printed %q", rep.Profiled.Scheduled, rep.Basic.Pods, top))
	}
	for _, r := range rep.BasicMedian {
		if r.DNF || r.Scheduled != rep.Basic.Pods || r.Overall <= 0 {
			problems = append(problems, fmt.Sprintf("SchedulingBasic, %s: %d of %d measured pods scheduled, %.1f pods/s overall", r.Name, r.Scheduled, rep.Basic.Pods, r.Overall))
		}
		if r.Name != bench.Ceiling && r.PeakRSS <= 0 {
			problems = append(problems, fmt.Sprintf("SchedulingBasic, %s: no peak RSS", r.Name))
		}
	}
	for _, name := range bench.PreemptionWorkloads {
		_, pods := rep.Preemption.Sized(name)
		for _, r := range rep.PreemptionMedians()[name] {
			if r.DNF || r.Scheduled != pods || r.Overall <= 0 || r.Phases == nil || r.Phases.Preemptors == 0 || r.Phases.Victims == 0 {
				problems = append(problems, fmt.Sprintf("%s, %s: %d of %d measured pods scheduled, %.1f pods/s overall, phases %+v", name, r.Name, r.Scheduled, pods, r.Overall, r.Phases))
			}
		}
	}
	for _, r := range rep.GangMedian {
		if pods := rep.Gang.Groups * rep.Gang.PodsPerGroup; r.DNF || r.Scheduled != pods || r.Overall <= 0 {
			problems = append(problems, fmt.Sprintf("GangScheduling, %s: %d of %d pods scheduled, %.1f pods/s overall", r.Name, r.Scheduled, pods, r.Overall))
		}
	}
	for _, r := range rep.RequeueMedian {
		if r.DNF || r.Bound != r.Pods || r.Attempts < 2*r.Pods {
			problems = append(problems, fmt.Sprintf("requeue, %s: %d of %d bound in %d attempts", r.Name, r.Bound, r.Pods, r.Attempts))
		}
	}
	for _, p := range problems {
		fmt.Println("problem: " + p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the tiny bench found %d problem(s)", len(problems))
	}
	return nil
}

// writeDocs writes the report under docs/data and regenerates the blocks of
// docs/benchmarks.md that embed it.
func writeDocs(root string, rep *bench.Report, top, largeTop []byte) error {
	dir := filepath.Join(root, "docs", "data")
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	if len(rep.BasicMedian) > 0 {
		files["bench.json"] = append(data, '\n')
		files["bench.md"] = []byte(rep.Markdown("data/bench.svg"))
		files["bench.svg"] = []byte(rep.SVG())
	}
	// bench.json holds every run of every workload; each table has a file
	// of its own, so that a page quotes just the table it talks about.
	if len(rep.PreemptionBasicMedian) > 0 {
		files["bench-preemption.md"] = []byte(rep.PreemptionMarkdown())
	}
	if len(rep.GangMedian) > 0 {
		files["bench-gang.md"] = []byte(rep.GangMarkdown())
	}
	if len(rep.LargeMedian) > 0 {
		// The same report: its tables are the same run's.
		files["bench-5000.md"] = []byte(rep.LargeMarkdown())
		files["bench-summary.md"] = []byte(rep.SummaryMarkdown("docs/benchmarks.md"))
	}
	if largeTop != nil {
		files["bench-5000-profile.txt"] = []byte(fmt.Sprintf("%s, SchedulingBasic measured phase at %d nodes, %d init pods, %d measured pods, %s on %s\n%s", rep.LargeProfiled.Name, rep.Large.Nodes, rep.Large.InitPods, rep.Large.Pods, rep.Date, rep.Machine, largeTop))
	}
	if top != nil {
		files["bench-profile.txt"] = []byte(fmt.Sprintf("%s, SchedulingBasic measured phase, %s on %s\n%s", rep.Profiled.Name, rep.Date, rep.Machine, top))
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	// The Japanese posts quote the same tables, in Japanese, from the same
	// report (docs/data/ja).
	if err := os.MkdirAll(filepath.Join(dir, "ja"), 0o755); err != nil {
		return err
	}
	for _, name := range []string{"bench-5000.md", "bench-gang.md", "bench-preemption.md", "bench-summary.md"} {
		if content, ok := files[name]; ok {
			if err := os.WriteFile(filepath.Join(dir, "ja", name), []byte(bench.Japanese(string(content))), 0o644); err != nil {
				return err
			}
		}
	}
	page := filepath.Join(root, "docs", "benchmarks.md")
	text, err := os.ReadFile(page)
	if err != nil {
		return err
	}
	rendered, err := docsgen.Render(root, filepath.Dir(page), text)
	if err != nil {
		return err
	}
	fmt.Println("wrote docs/data/bench*.{json,md,svg} and", page)
	return os.WriteFile(page, rendered, 0o644)
}
