// Command compare checks that chapters decide as the real kube-scheduler
// decides. For each chapter from 02 on and each scenario marked
// deterministic (exactly one right node for every pod), it plays the
// scenario twice on one local cluster (several scenarios play at once, each
// on a cluster of its own: --parallel): with the chapter's scheduler, and
// with kube-scheduler v1.37.1 configured with exactly the chapter's plugins
// and weights (see e2e.UpstreamConfig). Pods are created one per step, each
// waiting for its Binding (or, for a preemptor, until its victims are gone
// and it is bound). It prints both placements side by side and fails on any
// difference, naming the pod and both nodes: placements, unschedulable
// messages, and from chapter 09 on the preemption victims and the nodes
// each pod was nominated to. A tie for the top score in either scheduler
// fails the scenario as not deterministic.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"minisched/scripts/e2e"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	var f e2e.Flags
	f.Register(flag.CommandLine, ".cache/compare", 4)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// 01 picks at random: there is nothing to compare.
	h, err := e2e.Setup(ctx, f, func(c e2e.Chapter) bool { return c.Number >= 2 })
	if err != nil {
		return err
	}
	defer h.Close()
	for _, r := range h.Runners {
		r.OnePodPerStep = true
	}

	row := "%-" + fmt.Sprint(e2e.DirWidth(h.Chapters, 18)) + "s %-26s %-15s %-16s %-16s %s\n"
	fmt.Printf(row, "CHAPTER", "SCENARIO", "POD", "CHAPTER'S NODE", "KUBE-SCHEDULER", "RESULT")
	type job struct {
		ours, upstream e2e.Scheduler
		dir            string
		sc             *e2e.Scenario
	}
	var jobs []job
	for _, c := range h.Chapters {
		ours := e2e.Scheduler{Chapter: c.Number, Label: c.Dir, Command: []string{h.Binaries[c.Number], "-v=2", "--vmodule=schedule_one=10"}}
		if c.Number == e2e.PluginsChapter {
			// Chapter 13 with its own NodeResourcesFit, against
			// kube-scheduler's defaults.
			if ours, err = e2e.PluginsScheduler(h.Root, h.Dir, h.Binaries[c.Number], "fit", e2e.ChapterClient,
				"-v=2", "--vmodule=schedule_one=10,schedule_one_podgroup=10", e2e.PluginsCompareGates); err != nil {
				return err
			}
		}
		upstream, err := e2e.UpstreamScheduler(f.Tools, h.Dir, c.Number)
		if err != nil {
			return err
		}
		for _, sc := range h.Scenarios {
			if sc.Deterministic && sc.AppliesTo(c.Number) {
				jobs = append(jobs, job{ours, upstream, c.Dir, sc})
			}
		}
	}
	passed := 0
	var failures []string
	// Both runs of a scenario play on one lane, one after the other.
	err = e2e.Play(ctx, h.Runners, len(jobs), func(ctx context.Context, r *e2e.Runner, i int) [2]e2e.Result {
		return [2]e2e.Result{r.Run(ctx, jobs[i].sc, jobs[i].ours), r.Run(ctx, jobs[i].sc, jobs[i].upstream)}
	}, func(i int, res [2]e2e.Result) {
		a, b := res[0], res[1]
		problems := compare(a, b)
		pods := sortedPods(a, b)
		for k, pod := range pods {
			verdict := ""
			if k == len(pods)-1 {
				verdict = "same"
				if len(problems) > 0 {
					verdict = "FAIL: " + strings.Join(problems, "; ")
				}
			}
			fmt.Printf(row, jobs[i].dir, jobs[i].sc.Name, pod, where(a, pod), where(b, pod), verdict)
		}
		if len(problems) > 0 {
			failures = append(failures, fmt.Sprintf("%s %s: %s\n", jobs[i].dir, jobs[i].sc.Name, strings.Join(problems, "; ")))
		} else {
			passed++
		}
	})
	if err != nil {
		return err
	}
	fmt.Printf("%d passed, %d failed\n", passed, len(failures))
	if len(failures) > 0 {
		// Repeated at the end, where a CI log's tail shows them.
		fmt.Print("failed:\n" + strings.Join(failures, ""))
		return fmt.Errorf("%d scenario(s) differ from kube-scheduler; logs in %s", len(failures), h.Dir)
	}
	return nil
}

// compare lists what makes two runs of a scenario disagree, or makes the
// comparison meaningless.
func compare(ours, up e2e.Result) []string {
	var problems []string
	for _, r := range []struct {
		who string
		res e2e.Result
	}{{"chapter", ours}, {"kube-scheduler", up}} {
		if !r.res.Passed {
			problems = append(problems, fmt.Sprintf("%s failed the scenario: %s", r.who, strings.Join(r.res.Problems, "; ")))
		}
		ties, err := e2e.Ties(r.res.Log)
		if err != nil {
			problems = append(problems, err.Error())
		}
		for _, pod := range slices.Sorted(maps.Keys(ties)) {
			problems = append(problems, fmt.Sprintf("not deterministic: %s tied for pod %s between %s", r.who, pod, strings.Join(ties[pod], ", ")))
		}
	}
	for _, pod := range sortedPods(ours, up) {
		if a, b := ours.Placements[pod], up.Placements[pod]; a != b {
			problems = append(problems, fmt.Sprintf("pod %s: chapter chose %s, kube-scheduler %s", pod, show(a), show(b)))
		}
		if a, b := ours.Unschedulable[pod], up.Unschedulable[pod]; a != b {
			problems = append(problems, fmt.Sprintf("pod %s: chapter says %q, kube-scheduler %q", pod, a, b))
		}
		if a, b := ours.Nominations[pod], up.Nominations[pod]; !slices.Equal(a, b) {
			problems = append(problems, fmt.Sprintf("pod %s: chapter nominated it to %v, kube-scheduler to %v", pod, a, b))
		}
	}
	if !slices.Equal(ours.Preempted, up.Preempted) {
		problems = append(problems, fmt.Sprintf("chapter preempted %v, kube-scheduler %v", ours.Preempted, up.Preempted))
	}
	return problems
}

func sortedPods(a, b e2e.Result) []string {
	set := map[string]bool{}
	for p := range a.Placements {
		set[p] = true
	}
	for p := range b.Placements {
		set[p] = true
	}
	for _, p := range append(slices.Clone(a.Preempted), b.Preempted...) {
		set[p] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// where shows what became of a pod: its node, or that it was preempted.
func where(r e2e.Result, pod string) string {
	if slices.Contains(r.Preempted, pod) {
		return "(preempted)"
	}
	return show(r.Placements[pod])
}

func show(node string) string {
	if node == "" {
		return "(unbound)"
	}
	return node
}
