// Command chaos runs chapters 05 on while the local cluster churns under
// them: nodes deleted and added, pending pods deleted, labels and taints
// changed, kube-apiserver restarted once; from chapter 09 on, pods of
// several priorities, the larger high-priority ones preempting. Then it stops kube-apiserver once
// more under a scheduler held to a few requests a second, so that requests
// certainly fail, and checks the scheduler logs them and recovers. It
// prints what happened and the invariant violations per chapter, and exits
// non-zero if there was any.
//
//	go run ./scripts/cmd/chaos --chapters 08
//	go run ./scripts/cmd/chaos --small      # what make test runs
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"minisched/scripts/e2e"
)

// firstChapter is the first chapter with informers: 01-04 List the
// cluster every cycle, and their docs say what that costs.
const firstChapter = 5

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	var f e2e.Flags
	f.Register(flag.CommandLine, ".cache/chaos", 1)
	cfg := e2e.DefaultChaos
	small := flag.Bool("small", false, "a small run (20 nodes, 300 pods and 200 at the outage), as make test runs it")
	flag.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "nodes at the start")
	flag.IntVar(&cfg.Pods, "pods", cfg.Pods, "pods to create")
	flag.IntVar(&cfg.Waves, "waves", cfg.Waves, "waves the pods are created in; the churn happens between them")
	flag.DurationVar(&cfg.Pause, "pause", cfg.Pause, "time between two waves")
	flag.DurationVar(&cfg.Settle, "settle", cfg.Settle, "how long pending pods that fit may take to be bound after the last wave")
	flag.DurationVar(&cfg.Down, "down", cfg.Down, "how long kube-apiserver stays down when it is restarted")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the churn's choices")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flag.Arg(0))
	}
	if *small {
		cfg.Nodes, cfg.Pods, cfg.OutagePods, cfg.Pause, cfg.Settle = 20, 300, 200, time.Second, 90*time.Second
		// The small run is a check, not a load: four chapters churn at
		// once (chapters 05 to 11 in two rounds), unless --parallel says
		// otherwise. The full run keeps the machine to one chapter.
		parallel := false
		flag.Visit(func(fl *flag.Flag) { parallel = parallel || fl.Name == "parallel" })
		if !parallel {
			f.Parallel = 4
		}
	}
	if cfg.Nodes < 1 || cfg.Pods < cfg.Waves || cfg.Waves < 1 || cfg.Pause < 0 || cfg.Settle <= 0 || cfg.Down < 0 {
		return fmt.Errorf("need --nodes ≥ 1, --waves ≥ 1, --pods ≥ --waves, --pause ≥ 0, --down ≥ 0 and --settle > 0")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	found, err := e2e.FindChapters(f.Root)
	if err != nil {
		return err
	}
	selected, err := e2e.SelectChapters(found, f.Chapters)
	if err != nil {
		return err
	}
	churned := 0
	for _, c := range selected {
		if c.Number < firstChapter && f.Chapters != "" {
			return fmt.Errorf("chapter %s has no informers and is not churned; chaos runs chapters %02d on", c.Dir, firstChapter)
		}
		if c.Number >= firstChapter {
			churned++
		}
	}
	// A cluster per chapter at most: each churns on one of its own.
	f.Parallel = max(1, min(f.Parallel, churned))
	h, err := e2e.Setup(ctx, f, func(c e2e.Chapter) bool { return c.Number >= firstChapter })
	if err != nil {
		return err
	}
	defer h.Close()

	fmt.Printf("%d nodes, %d pods in %d waves, %s apart; kube-apiserver down for %s once, right after %d more pods\n", cfg.Nodes, cfg.Pods, cfg.Waves, cfg.Pause, cfg.Down, cfg.OutagePods)
	row := "%-" + fmt.Sprint(e2e.DirWidth(h.Chapters, 20)) + "s %5s %6s %7s %8s %7s %6s %6s %8s %8s %8s %8s %7s %10s\n"
	fmt.Printf(row, "CHAPTER", "PODS", "NODES", "-NODES", "-PENDING", "ORPHANS", "LABELS", "TAINTS", "RESTARTS", "BOUND", "PENDING", "BINDINGS", "SETTLED", "VIOLATIONS")
	failed := 0
	type result struct {
		rep e2e.ChaosReport
		out e2e.OutageReport
	}
	// Chapters churn side by side, each on a cluster of its own
	// (--parallel): the churn waits on its waves and its settle far more
	// than it computes.
	err = e2e.Play(ctx, h.Runners, len(h.Chapters), func(ctx context.Context, r *e2e.Runner, i int) result {
		c := h.Chapters[i]
		// Chapter 13 runs as kube-scheduler with its defaults-plus-NodeCost
		// configuration (h.ChapterScheduler).
		sched, err := h.ChapterScheduler(c, "-v=3")
		if err != nil {
			return result{rep: e2e.ChaosReport{Violations: []string{err.Error()}}}
		}
		rep := r.Chaos(ctx, sched, cfg)
		return result{rep, r.Outage(ctx, sched, e2e.DefaultOutage)}
	}, func(i int, res result) {
		c, rep, out := h.Chapters[i], res.rep, res.out
		fmt.Printf(row, c.Dir, fmt.Sprint(rep.Pods), fmt.Sprint(rep.Nodes), fmt.Sprint(rep.NodesDeleted), fmt.Sprint(rep.PendingDeleted),
			fmt.Sprint(rep.OrphansDeleted), fmt.Sprint(rep.LabelChanges), fmt.Sprint(rep.TaintChanges), fmt.Sprint(rep.Restarts),
			fmt.Sprint(rep.Bound), fmt.Sprint(rep.Pending), fmt.Sprint(rep.Bindings), rep.Settled.Round(time.Second).String(), fmt.Sprint(len(rep.Violations)))
		fmt.Printf("    %d errors logged while kube-apiserver was down\n", rep.OutageErrors)
		if rep.Cache != nil {
			fmt.Printf("    scheduler_cache_size at the end: %d assumed pods, %d pods, %d nodes\n", rep.Cache["assumed_pods"], rep.Cache["pods"], rep.Cache["nodes"])
		}
		if c.Number >= e2e.PreemptionChapter {
			fmt.Printf("    preemption: %d decided (%d checked for room elsewhere, the others came around the restart), %d victims deleted, %d pods nominated\n",
				rep.Preemptions, rep.PreemptionsChecked, rep.Victims, rep.Nominated)
		}
		if c.Number >= e2e.PodGroupChapter {
			fmt.Printf("    gangs: %d PodGroups of 3, minCount 3; %d cycles that bound their members checked against minCount; %d preemptions on a node with a gang member, %d members preempted\n", rep.Gangs, rep.GangCycles, rep.GangCandidates, rep.GangVictims)
		}
		fmt.Printf("    %d Bindings refused by the apiserver; %d went to a deleted node, %d of them issued after the scheduler saw the deletion by a cycle that started before\n", rep.Refused, rep.LateBindings, rep.InFlight)
		fmt.Printf("    lost apiserver: %d pods at %d requests/s, cut off from kube-apiserver for %s once %d were bound; %d refused-connection lines logged, %d of %d bound after, 1 of them created after the cut (%d Bindings accepted, %d refused)\n",
			out.Pods-1, e2e.DefaultOutage.QPS, out.Down.Round(100*time.Millisecond), out.BoundBefore, out.Errors, out.Bound, out.Pods, out.Bindings, out.Refused)
		if out.Gangs > 0 {
			fmt.Printf("    lost apiserver, gangs: %d PodGroups of 3 among the pods; %d cycles that bound their members checked against minCount\n", out.Gangs, out.GangCycles)
		}
		for _, v := range rep.Violations {
			fmt.Println("    violation: " + v)
		}
		for _, v := range out.Violations {
			fmt.Println("    violation (lost apiserver): " + v)
		}
		if len(rep.Violations) > 0 {
			fmt.Println("    log: " + rep.Log)
		}
		if len(out.Violations) > 0 {
			fmt.Println("    log (lost apiserver): " + out.Log)
		}
		if len(rep.Violations)+len(out.Violations) > 0 {
			failed++
		}
	})
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d chapter(s) broke an invariant", failed)
	}
	return nil
}
