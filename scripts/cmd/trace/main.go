// Command trace shows where a scheduler's time goes (make trace). It runs
// a workload against a chapter built with --trace-file (chapter 12 on),
// then turns the Go execution trace into:
//   - Chrome Trace Event JSON for Perfetto's UI: a row per goroutine, a
//     slice per region with its wall time and CPU time, arrows from each
//     scheduling cycle to its binding cycle, counters for the heap and the
//     goroutines;
//   - an SVG of a few attempts laid out along CPU time, with a wall-time
//     view beside it.
//
// The workload is a scenario of the KWOK suite, or one of the benchmark's
// workloads at a small size (SchedulingBasic, PreemptionBasic,
// PreemptionAsync, GangScheduling):
//
//	go run ./scripts/cmd/trace --scenario PreemptionBasic
//	go run ./scripts/cmd/trace --in run.trace --out dir   # convert only
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"minisched/scripts/bench"
	"minisched/scripts/cluster"
	"minisched/scripts/docsgen"
	"minisched/scripts/e2e"
	"minisched/scripts/schedtrace"
)

// firstTracingChapter is the first chapter with --trace-file.
const firstTracingChapter = 12

// The benchmark's other workloads, by scheduler_perf's names.
const (
	schedulingBasic = "SchedulingBasic"
	gangScheduling  = "GangScheduling"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "trace: "+err.Error())
		os.Exit(1)
	}
}

type options struct {
	root, tools, chapter, scenario, in, out, pods, kind, title string
	max                                                        int
}

func run() error {
	var o options
	flag.StringVar(&o.root, "root", ".", "repository root")
	flag.StringVar(&o.tools, "tools", ".cache/tools", "tools directory (see scripts/build-tools.sh)")
	flag.StringVar(&o.chapter, "chapter", strconv.Itoa(firstTracingChapter), "chapter to run (12 on)")
	flag.StringVar(&o.scenario, "scenario", bench.PreemptionBasic, "a scenario of the KWOK suite, or SchedulingBasic, PreemptionBasic, PreemptionAsync or GangScheduling")
	flag.StringVar(&o.in, "in", "", "convert this execution trace instead of running a workload")
	flag.StringVar(&o.out, "out", filepath.Join(".cache", "trace"), "directory for the trace, the JSON and the SVG")
	flag.StringVar(&o.pods, "pods", "", "draw the attempts of the pods (namespace/name) this regular expression matches")
	flag.StringVar(&o.kind, "kind", "", "draw only attempts that preempted (preemption) or of pod groups (podgroup); default after the workload")
	flag.IntVar(&o.max, "max", 3, "how many attempts the SVG draws")
	flag.StringVar(&o.title, "title", "", "the SVG's title (default: the chapter and the workload, or the file's name)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	sel := schedtrace.Selection{Kind: o.kind, Max: o.max}
	if o.pods != "" {
		re, err := regexp.Compile(o.pods)
		if err != nil {
			return fmt.Errorf("--pods: %w", err)
		}
		sel.Pods = re
	}
	if o.kind != "" && o.kind != "preemption" && o.kind != "podgroup" {
		return fmt.Errorf("--kind must be preemption or podgroup, got %q", o.kind)
	}
	if o.max < 1 {
		return fmt.Errorf("--max must be at least 1, got %d", o.max)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if o.in != "" {
		base := filepath.Join(o.out, trimExt(filepath.Base(o.in)))
		return convert(o.in, base, sel, or(o.title, "trace "+filepath.Base(o.in)))
	}
	n, err := strconv.Atoi(o.chapter)
	if err != nil || n < firstTracingChapter || n == e2e.PluginsChapter {
		return fmt.Errorf("--chapter must be a chapter with --trace-file, %d or later, but not %d (kube-scheduler, which has none), got %q", firstTracingChapter, e2e.PluginsChapter, o.chapter)
	}
	if sel.Kind == "" {
		switch o.scenario {
		case bench.PreemptionBasic, bench.PreemptionAsync:
			sel.Kind = "preemption"
		case gangScheduling:
			sel.Kind = "podgroup"
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	name := fmt.Sprintf("%02d-%s", n, o.scenario)
	traceFile, err := filepath.Abs(filepath.Join(o.out, name+".trace"))
	if err != nil {
		return err
	}
	if err := record(ctx, o, n, traceFile); err != nil {
		return err
	}
	return convert(traceFile, filepath.Join(o.out, name), sel, or(o.title, fmt.Sprintf("chapter %02d, %s", n, o.scenario)))
}

// record runs the workload against the chapter, built without the race
// detector (it would dwarf the times the trace measures), with
// --trace-file.
func record(ctx context.Context, o options, n int, traceFile string) error {
	found, err := e2e.FindChapters(o.root)
	if err != nil {
		return err
	}
	chapters, err := e2e.SelectChapters(found, strconv.Itoa(n))
	if err != nil {
		return err
	}
	c := chapters[0]
	dir, err := filepath.Abs(filepath.Join(o.out, "run"))
	if err != nil {
		return err
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	_ = os.Remove(traceFile)
	fmt.Fprintf(os.Stderr, "building %s\n", c.Dir)
	bin, err := e2e.BuildChapterWith(o.root, c, filepath.Join(dir, "bin"), false)
	if err != nil {
		return err
	}
	sched := e2e.Scheduler{Chapter: c.Number, Label: c.Dir, Command: []string{bin, "-v=2", "--trace-file=" + traceFile}}
	var scenario *e2e.Scenario
	if !isBenchWorkload(o.scenario) {
		all, err := e2e.LoadDir(filepath.Join(o.root, "scripts", "e2e", "scenarios"))
		if err != nil {
			return err
		}
		for _, sc := range all {
			if sc.Name == o.scenario {
				scenario = sc
			}
		}
		if scenario == nil {
			return fmt.Errorf("no scenario or benchmark workload named %q (see scripts/e2e/scenarios)", o.scenario)
		}
		if !scenario.AppliesTo(n) {
			return fmt.Errorf("scenario %q does not apply to chapter %02d", o.scenario, n)
		}
	}
	fmt.Fprintln(os.Stderr, "starting the local cluster")
	cl, err := cluster.Start(ctx, cluster.Options{ToolsDir: o.tools, Dir: filepath.Join(dir, "cluster")})
	if err != nil {
		return err
	}
	defer func() {
		if err := cl.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
		}
	}()
	cl.Config.QPS, cl.Config.Burst = 5000, 5000
	client := kubernetes.NewForConfigOrDie(cl.Config)
	fmt.Fprintf(os.Stderr, "running %s against %s with --trace-file\n", o.scenario, c.Dir)
	if scenario != nil {
		r := &e2e.Runner{Cluster: cl, Client: client, LogDir: dir}
		res := r.Run(ctx, scenario, sched)
		if !res.Passed {
			return fmt.Errorf("scenario %s failed: %v (log: %s)", o.scenario, res.Problems, res.Log)
		}
	} else {
		env := &bench.Env{Cluster: cl, Client: client, LogDir: dir}
		if err := runWorkload(ctx, env, o.scenario, bench.Target{Name: c.Dir, Sched: &sched}); err != nil {
			return err
		}
	}
	if _, err := os.Stat(traceFile); err != nil {
		return fmt.Errorf("the scheduler wrote no trace: %w", err)
	}
	return nil
}

func isBenchWorkload(name string) bool {
	switch name {
	case schedulingBasic, bench.PreemptionBasic, bench.PreemptionAsync, gangScheduling:
		return true
	}
	return false
}

// runWorkload runs a benchmark workload once, small: a trace records
// every region of every cycle, so a few hundred attempts are plenty.
// PreemptionAsync measures 40 pods: with the trace on, a run that measured
// 100 or 200 saw the measured pods wait behind the preemptors, one every
// 200 ms, until these had taken every node.
func runWorkload(ctx context.Context, env *bench.Env, workload string, t bench.Target) error {
	var res bench.Result
	var err error
	switch workload {
	case schedulingBasic:
		res, err = env.RunSchedulingBasic(ctx, t, bench.Config{Nodes: 100, InitPods: 100, Pods: 200, Cap: 2 * time.Minute, QPS: 5000, Burst: 5000}, 1)
	case bench.PreemptionBasic, bench.PreemptionAsync:
		res, err = env.RunPreemption(ctx, workload, t, bench.PreemptionConfig{Nodes: 50, Pods: 50, AsyncNodes: 50, AsyncPods: 40, Interval: 200 * time.Millisecond, Cap: 2 * time.Minute}, 1)
	case gangScheduling:
		res, err = env.RunGangScheduling(ctx, t, bench.GangConfig{Nodes: 100, Groups: 20, PodsPerGroup: 3, Cap: 2 * time.Minute}, 1)
	}
	if err != nil {
		return err
	}
	if res.DNF {
		return fmt.Errorf("%s did not finish: %d pods scheduled", workload, res.Scheduled)
	}
	return nil
}

// convert reads a trace and writes base.json (checked by
// schedtrace.Validate) and base.svg.
func convert(in, base string, sel schedtrace.Selection, title string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	tr, err := schedtrace.Read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var js bytes.Buffer
	if err := tr.WriteChrome(&js); err != nil {
		return err
	}
	if err := schedtrace.Validate(js.Bytes()); err != nil {
		return fmt.Errorf("the JSON written would not load as it should: %w", err)
	}
	if err := os.WriteFile(base+".json", js.Bytes(), 0o644); err != nil {
		return err
	}
	ids := tr.Attempts(sel)
	if len(ids) == 0 {
		return fmt.Errorf("%s: no attempt matches --pods and --kind (the trace has %d tasks)", in, len(tr.Tasks))
	}
	var svg bytes.Buffer
	stamp := fmt.Sprintf("drawn on %s, %s", time.Now().UTC().Format("2006-01-02"), docsgen.Machine())
	if err := tr.WriteSVG(&svg, ids, title, stamp); err != nil {
		return err
	}
	if err := os.WriteFile(base+".svg", svg.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s.json (%d regions on %d goroutines, %d arrows)\n", base, len(tr.Regions), len(tr.Goroutines), len(tr.Flows()))
	fmt.Printf("wrote %s.svg (%d attempts)\n", base, len(ids))
	fmt.Printf("open the JSON in Perfetto: https://ui.perfetto.dev, \"Open trace file\" (the file stays in your browser); or: go tool trace %s\n", in)
	return nil
}

func or(s, otherwise string) string {
	if s != "" {
		return s
	}
	return otherwise
}

func trimExt(name string) string {
	return name[:len(name)-len(filepath.Ext(name))]
}
