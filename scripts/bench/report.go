package bench

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"unicode/utf8"
)

// Names of the reference targets.
const (
	Ceiling          = "bind ceiling"
	UpstreamLike08   = "kube-scheduler (like 08)"
	UpstreamLike09   = "kube-scheduler (like 09)"
	UpstreamLike10   = "kube-scheduler (like 10)"
	UpstreamLike11   = "kube-scheduler (like 11)"
	UpstreamDefaults = "kube-scheduler (defaults)"
)

// Report is a whole make bench run: every run of every target, and the
// medians the targets are judged on.
type Report struct {
	Date string `json:"date"`
	// Resumed lists when the run was resumed (make bench --resume).
	Resumed []string      `json:"resumed,omitempty"`
	Machine string        `json:"machine"`
	Runs    int           `json:"runs"`
	Basic   Config        `json:"basicConfig"`
	Requeue RequeueConfig `json:"requeueConfig"`
	// BasicRuns and RequeueRuns hold each run's results, in run order.
	BasicRuns     [][]Result        `json:"basicRuns"`
	RequeueRuns   [][]RequeueResult `json:"requeueRuns"`
	BasicMedian   []Result          `json:"basicMedian"`
	RequeueMedian []RequeueResult   `json:"requeueMedian"`
	Targets       []Check           `json:"targets"`
	// Profiled is the extra run of the profiled chapter (not in the
	// medians: profiling costs a little CPU).
	Profiled Result `json:"profiled"`
	// Preemption sizes PreemptionBasic and PreemptionAsync, which run the
	// chapters from 09 on and kube-scheduler like 09.
	Preemption            PreemptionConfig `json:"preemptionConfig"`
	PreemptionBasicRuns   [][]Result       `json:"preemptionBasicRuns,omitempty"`
	PreemptionAsyncRuns   [][]Result       `json:"preemptionAsyncRuns,omitempty"`
	PreemptionBasicMedian []Result         `json:"preemptionBasicMedian,omitempty"`
	PreemptionAsyncMedian []Result         `json:"preemptionAsyncMedian,omitempty"`
	// Gang sizes GangScheduling, which runs the chapters from 11 on and
	// kube-scheduler like 11.
	Gang       GangConfig `json:"gangConfig"`
	GangRuns   [][]Result `json:"gangRuns,omitempty"`
	GangMedian []Result   `json:"gangMedian,omitempty"`
	// Large sizes SchedulingBasic at scheduler_perf's largest size, in the
	// same run: 08 (which scores every node), the chapters from 10 on
	// (which stop searching) and kube-scheduler, where the scheduler and
	// not the apiserver is the limit.
	Large       Config     `json:"largeConfig"`
	LargeRuns   [][]Result `json:"largeRuns,omitempty"`
	LargeMedian []Result   `json:"largeMedian,omitempty"`
	// LargeProfiled is one more large run of the profiled chapter.
	LargeProfiled Result `json:"largeProfiled"`
}

// when is the run's date, and those it was resumed on (--resume).
func (r *Report) when() string {
	if len(r.Resumed) == 0 {
		return r.Date
	}
	return r.Date + " (resumed " + strings.Join(r.Resumed, ", ") + ")"
}

// Check is one of issue 6's targets, judged on the medians.
type Check struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// median returns the middle value (the lower middle for an even count).
func median[T int | int64 | float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// MedianBasic takes, target by target, the median of each figure over the
// runs. A target is DNF when most of its runs were.
func MedianBasic(runs [][]Result) []Result {
	var out []Result
	for _, name := range names(runs, func(r Result) string { return r.Name }) {
		var avg, p50, p90, p99, overall, secs, cpu []float64
		var scheduled []int
		var rss []int64
		dnf, samples := 0, []int{}
		for _, run := range runs {
			for _, r := range run {
				if r.Name != name {
					continue
				}
				avg, p50, p90, p99 = append(avg, r.Throughput.Average), append(p50, r.Throughput.Perc50), append(p90, r.Throughput.Perc90), append(p99, r.Throughput.Perc99)
				overall, cpu = append(overall, r.Overall), append(cpu, r.CPUSeconds)
				secs, scheduled, rss, samples = append(secs, r.Seconds), append(scheduled, r.Scheduled), append(rss, r.PeakRSS), append(samples, r.Throughput.Samples)
				if r.DNF {
					dnf++
				}
			}
		}
		out = append(out, Result{
			Name:       name,
			Throughput: Summary{Average: median(avg), Perc50: median(p50), Perc90: median(p90), Perc99: median(p99), Samples: median(samples)},
			Overall:    median(overall), Scheduled: median(scheduled), DNF: 2*dnf > len(avg), Seconds: median(secs), PeakRSS: median(rss), CPUSeconds: median(cpu),
		})
	}
	return out
}

// MedianRequeue takes, scheduler by scheduler, the median of each figure.
func MedianRequeue(runs [][]RequeueResult) []RequeueResult {
	var out []RequeueResult
	for _, name := range names(runs, func(r RequeueResult) string { return r.Name }) {
		var pods, bound, attempts, wasted []int
		dnf := 0
		for _, run := range runs {
			for _, r := range run {
				if r.Name != name {
					continue
				}
				pods, bound, attempts, wasted = append(pods, r.Pods), append(bound, r.Bound), append(attempts, r.Attempts), append(wasted, r.Wasted)
				if r.DNF {
					dnf++
				}
			}
		}
		out = append(out, RequeueResult{Name: name, Pods: median(pods), Bound: median(bound), Attempts: median(attempts), Wasted: median(wasted), DNF: 2*dnf > len(pods)})
	}
	return out
}

// names lists the targets in the order of their first appearance.
func names[T any](runs [][]T, name func(T) string) []string {
	var out []string
	for _, run := range runs {
		for _, r := range run {
			if n := name(r); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

func find[T any](rs []T, name func(T) string, want string) (T, bool) {
	for _, r := range rs {
		if name(r) == want {
			return r, true
		}
	}
	var zero T
	return zero, false
}

// Judge checks issue 6's targets on the medians: 08's throughput at least
// 1.0× kube-scheduler configured like it and 0.8× the bind ceiling; 08's
// wasted attempts no more than kube-scheduler's and at least 5× fewer than
// 06's. A target whose figures are missing is not met.
func Judge(basic []Result, requeue []RequeueResult, chapter08, chapter06 string) []Check {
	byName := func(r Result) string { return r.Name }
	rqName := func(r RequeueResult) string { return r.Name }
	var checks []Check
	ours, okOurs := find(basic, byName, chapter08)
	ratio := func(ref string, want float64) {
		c := Check{Target: fmt.Sprintf("%s SchedulingBasic ≥ %.1f× %s", chapter08, want, ref), Measured: "not measured"}
		if theirs, ok := find(basic, byName, ref); ok && okOurs && theirs.Throughput.Average > 0 {
			r := ours.Throughput.Average / theirs.Throughput.Average
			c.Measured = unfinished(fmt.Sprintf("%.2f× (%.1f vs %.1f pods/s)", r, ours.Throughput.Average, theirs.Throughput.Average), ours.DNF)
			c.Met = r >= want && !ours.DNF
		}
		checks = append(checks, c)
	}
	ratio(UpstreamLike08, 1.0)
	ratio(Ceiling, 0.8)

	rq08, ok08 := find(requeue, rqName, chapter08)
	up, okUp := find(requeue, rqName, UpstreamLike08)
	c := Check{Target: fmt.Sprintf("%s wasted attempts ≤ %s's", chapter08, UpstreamLike08), Measured: "not measured"}
	if ok08 && okUp {
		c.Measured = unfinished(fmt.Sprintf("%d vs %d", rq08.Wasted, up.Wasted), rq08.DNF)
		c.Met = rq08.Wasted <= up.Wasted && !rq08.DNF
	}
	checks = append(checks, c)
	rq06, ok06 := find(requeue, rqName, chapter06)
	c = Check{Target: fmt.Sprintf("%s wasted attempts ≥ 5× fewer than %s's", chapter08, chapter06), Measured: "not measured"}
	if ok08 && ok06 {
		c.Measured = unfinished(fmt.Sprintf("%d vs %d", rq08.Wasted, rq06.Wasted), rq08.DNF)
		c.Met = 5*max(rq08.Wasted, 0) <= rq06.Wasted && rq06.Wasted > 0 && !rq08.DNF
	}
	return append(checks, c)
}

// unfinished marks a ratio whose own target is DNF, most of its runs
// stopped at the cap with pods left (MedianBasic): its pods/s are of fewer
// pods and a shorter run than the other's, so the target is not met
// however the ratio reads.
func unfinished(measured string, dnf bool) string {
	if !dnf {
		return measured
	}
	if strings.HasSuffix(measured, ")") {
		return strings.TrimSuffix(measured, ")") + "; most of its runs did not finish)"
	}
	return measured + " (most of its runs did not finish)"
}

// TracedSuffix names the run of a chapter with --trace-file on.
const TracedSuffix = " (--trace-file)"

// JudgeTrace reports what a trace costs (issue 30): the first chapter
// with --trace-file (chapter, trace off) against the chapter before it,
// which has no instrumentation to switch off, and the same chapter with
// the trace on against off. The first is meant to be nothing
// measurable: at least 0.95× in throughput, a margin below the noise
// between runs at this size. Both give the CPU ms per pod too, which
// moves less than the rate. The second has no target: it says what
// recording every region costs.
func JudgeTrace(basic []Result, before, chapter string) []Check {
	byName := func(r Result) string { return r.Name }
	perPod := func(r Result) float64 {
		if r.Scheduled == 0 {
			return 0
		}
		return 1000 * r.CPUSeconds / float64(r.Scheduled)
	}
	compare := func(ours, ref string, want float64) Check {
		c := Check{Target: fmt.Sprintf("%s SchedulingBasic ≥ %.2f× %s", ours, want, ref), Measured: "not measured"}
		if want == 0 {
			c.Target = fmt.Sprintf("%s SchedulingBasic against %s", ours, ref)
		}
		a, okA := find(basic, byName, ours)
		b, okB := find(basic, byName, ref)
		if okA && okB && b.Throughput.Average > 0 {
			r := a.Throughput.Average / b.Throughput.Average
			c.Measured = unfinished(fmt.Sprintf("%.2f× (%.1f vs %.1f pods/s; %.2f vs %.2f CPU ms per pod)", r, a.Throughput.Average, b.Throughput.Average, perPod(a), perPod(b)), a.DNF)
			c.Met = r >= want && !a.DNF
		}
		return c
	}
	return []Check{compare(chapter, before, 0.95), compare(chapter+TracedSuffix, chapter, 0)}
}

// JudgeSearch checks issue 16's throughput target on the medians: chapter
// 10's SchedulingBasic average at least 1.0× kube-scheduler with its
// defaults, which stops searching as 10 does. Meant for scheduler_perf's
// 5,000 nodes and 10,000 pods; reported, never asserted.
func JudgeSearch(basic []Result, chapter10 string, nodes int) Check {
	c := Check{Target: fmt.Sprintf("%s SchedulingBasic at %d nodes ≥ 1.0× %s", chapter10, nodes, UpstreamDefaults), Measured: "not measured"}
	ours, ok1 := find(basic, func(r Result) string { return r.Name }, chapter10)
	theirs, ok2 := find(basic, func(r Result) string { return r.Name }, UpstreamDefaults)
	if ok1 && ok2 && theirs.Throughput.Average > 0 {
		r := ours.Throughput.Average / theirs.Throughput.Average
		c.Measured = unfinished(fmt.Sprintf("%.2f× (%.1f vs %.1f pods/s)", r, ours.Throughput.Average, theirs.Throughput.Average), ours.DNF)
		c.Met = r >= 1.0 && !ours.DNF
	}
	return c
}

// JudgeGang checks issue 17's target on the medians: chapter 11's
// GangScheduling throughput at least 1.0× kube-scheduler configured like
// 11. It is reported, never asserted.
func JudgeGang(gang []Result, chapter11, like11 string) Check {
	c := Check{Target: fmt.Sprintf("%s GangScheduling ≥ 1.0× %s", chapter11, like11), Measured: "not measured"}
	ours, ok1 := find(gang, func(r Result) string { return r.Name }, chapter11)
	theirs, ok2 := find(gang, func(r Result) string { return r.Name }, like11)
	if ok1 && ok2 && theirs.Throughput.Average > 0 {
		r := ours.Throughput.Average / theirs.Throughput.Average
		c.Measured = unfinished(fmt.Sprintf("%.2f× (%.1f vs %.1f pods/s)", r, ours.Throughput.Average, theirs.Throughput.Average), ours.DNF)
		c.Met = r >= 1.0 && !ours.DNF
	}
	return c
}

// JudgePreemption checks issue 15's target on the medians: the chapter's
// average throughput at least 1.0× kube-scheduler configured like 09, on
// each preemption workload. It is reported, never asserted.
func JudgePreemption(basic, async []Result, chapter09 string) []Check {
	var checks []Check
	for _, w := range []struct {
		name string
		rs   []Result
	}{{PreemptionBasic, basic}, {PreemptionAsync, async}} {
		c := Check{Target: fmt.Sprintf("%s %s ≥ 1.0× %s", chapter09, w.name, UpstreamLike09), Measured: "not measured"}
		ours, ok1 := find(w.rs, func(r Result) string { return r.Name }, chapter09)
		theirs, ok2 := find(w.rs, func(r Result) string { return r.Name }, UpstreamLike09)
		if ok1 && ok2 && theirs.Throughput.Average > 0 {
			r := ours.Throughput.Average / theirs.Throughput.Average
			c.Measured = unfinished(fmt.Sprintf("%.2f× (%.1f vs %.1f pods/s)", r, ours.Throughput.Average, theirs.Throughput.Average), ours.DNF)
			c.Met = r >= 1.0 && !ours.DNF
		}
		checks = append(checks, c)
	}
	return checks
}

// Markdown renders the report's tables for docs/benchmarks.md; svg is the
// chart's path relative to the page.
func (r *Report) Markdown(svg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s. Median of %d runs.\n\n", r.when(), r.Machine, r.Runs)
	fmt.Fprintf(&b, "**SchedulingBasic**: %d nodes, %d init pods, %d measured pods; every client at %g requests/s, burst %d; cap %s.\n\n",
		r.Basic.Nodes, r.Basic.InitPods, r.Basic.Pods, r.Basic.QPS, r.Basic.Burst, r.Basic.Cap)
	fmt.Fprintf(&b, "![Average throughput of each scheduler, pods/s](%s)\n\n", svg)
	up, _ := find(r.BasicMedian, func(x Result) string { return x.Name }, UpstreamLike08)
	ceil, _ := find(r.BasicMedian, func(x Result) string { return x.Name }, Ceiling)
	times := func(a, ref float64) string {
		if ref == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", a/ref)
	}
	b.WriteString("| scheduler | average pods/s | p50 | p90 | p99 | overall | × kube-scheduler (like 08) | × bind ceiling | measured pods scheduled | peak RSS | CPU ms per pod |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range r.BasicMedian {
		done := doneCell(x)
		rss, cpu := "–", "–"
		if x.PeakRSS > 0 {
			rss = fmt.Sprintf("%d MiB", x.PeakRSS>>20)
		}
		if x.CPUSeconds > 0 && x.Scheduled > 0 {
			cpu = fmt.Sprintf("%.2f", 1000*x.CPUSeconds/float64(x.Scheduled))
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s |\n", x.Name, x.Throughput.Average, x.Throughput.Perc50, x.Throughput.Perc90, x.Throughput.Perc99, x.Overall,
			times(x.Throughput.Average, up.Throughput.Average), times(x.Throughput.Average, ceil.Throughput.Average), done, rss, cpu)
	}
	fmt.Fprintf(&b, "\n**Requeue**: %d pods wait for a label no node has among %d nodes; %d rounds, %s apart, change a label they do not care about on every node and add a node without theirs; then a node with room for all of them is added, and labelled. Wasted attempts are those beyond two per pod (one finds no node, one binds).\n\n",
		r.Requeue.Pods, r.Requeue.Nodes, r.Requeue.Rounds, r.Requeue.Pause)
	upRq, _ := find(r.RequeueMedian, func(x RequeueResult) string { return x.Name }, UpstreamLike08)
	b.WriteString("| scheduler | attempts | attempts per pod | wasted | wasted, × kube-scheduler (like 08) | bound |\n|---|---:|---:|---:|---:|---:|\n")
	for _, x := range r.RequeueMedian {
		rel := "–"
		if upRq.Wasted > 0 {
			rel = fmt.Sprintf("%.1f×", float64(x.Wasted)/float64(upRq.Wasted))
		}
		bound := fmt.Sprintf("%d/%d", x.Bound, x.Pods)
		if x.DNF {
			bound += " (DNF)"
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f | %d | %s | %s |\n", x.Name, x.Attempts, x.AttemptsPerPod(), x.Wasted, rel, bound)
	}
	b.WriteString("\n**Targets** (on the medians):\n\n")
	r.targetsTable(&b, func(c Check) bool {
		return !strings.Contains(c.Target, "Preemption") && !strings.Contains(c.Target, "GangScheduling") && !strings.Contains(c.Target, " nodes ≥")
	})
	return b.String()
}

// GangMarkdown renders the GangScheduling table and its target for
// docs/benchmarks.md and chapter 11's page.
func (r *Report) GangMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s. Median of %d runs.\n", r.when(), r.Machine, r.Runs)
	fmt.Fprintf(&b, "\n**GangScheduling**: %d nodes; %d PodGroups with `minCount: %d`, created first, then their %d pods of 100m, every pod measured; cap %s.\n\n",
		r.Gang.Nodes, r.Gang.Groups, r.Gang.PodsPerGroup, r.Gang.Groups*r.Gang.PodsPerGroup, r.Gang.Cap)
	up, _ := find(r.GangMedian, func(x Result) string { return x.Name }, UpstreamLike11)
	b.WriteString("| scheduler | average pods/s | p50 | p90 | p99 | overall | × kube-scheduler (like 11) | pods scheduled | CPU s |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range r.GangMedian {
		done := doneCell(x)
		rel := "–"
		if up.Throughput.Average > 0 {
			rel = fmt.Sprintf("%.2f×", x.Throughput.Average/up.Throughput.Average)
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s | %.1f |\n", x.Name, x.Throughput.Average, x.Throughput.Perc50, x.Throughput.Perc90, x.Throughput.Perc99, x.Overall,
			rel, done, x.CPUSeconds)
	}
	b.WriteString("\n**Target** (on the medians, reported, never asserted):\n\n")
	r.targetsTable(&b, func(c Check) bool { return strings.Contains(c.Target, "GangScheduling") })
	return b.String()
}

// SummaryMarkdown renders one row per scheduler, its average
// SchedulingBasic throughput at the default and the large size, for the
// README, which quotes it rather than retyping a figure. docs is the path
// of docs/benchmarks.md from the README.
func (r *Report) SummaryMarkdown(docs string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SchedulingBasic, average pods/s, median of %d runs, measured %s on %s ([all the tables](%s)):\n\n", r.Runs, r.Date, r.Machine, docs)
	fmt.Fprintf(&b, "| scheduler | %d nodes | %d nodes |\n|---|---:|---:|\n", r.Basic.Nodes, r.Large.Nodes)
	cell := func(rs []Result, name string) string {
		x, ok := find(rs, func(x Result) string { return x.Name }, name)
		switch {
		case !ok:
			return "–"
		case x.DNF:
			return fmt.Sprintf("%.1f (DNF)", x.Throughput.Average)
		}
		return fmt.Sprintf("%.1f", x.Throughput.Average)
	}
	seen := map[string]bool{}
	for _, rs := range [][]Result{r.BasicMedian, r.LargeMedian} {
		for _, x := range rs {
			if seen[x.Name] {
				continue
			}
			seen[x.Name] = true
			fmt.Fprintf(&b, "| %s | %s | %s |\n", x.Name, cell(r.BasicMedian, x.Name), cell(r.LargeMedian, x.Name))
		}
	}
	return b.String()
}

// LargeMarkdown renders SchedulingBasic at the large size for
// docs/benchmarks.md and the pages of chapters 08 and 10, against
// kube-scheduler with its defaults.
func (r *Report) LargeMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s, in the same `make bench` run as every other benchmark table. Median of %d runs.\n\n", r.when(), r.Machine, r.Runs)
	fmt.Fprintf(&b, "**SchedulingBasic at %d nodes**: %d init pods, %d measured pods; every client at %g requests/s, burst %d; cap %s.\n\n",
		r.Large.Nodes, r.Large.InitPods, r.Large.Pods, r.Large.QPS, r.Large.Burst, r.Large.Cap)
	up, _ := find(r.LargeMedian, func(x Result) string { return x.Name }, UpstreamDefaults)
	b.WriteString("| scheduler | average pods/s | p50 | p90 | p99 | overall | × kube-scheduler (defaults) | measured pods scheduled | peak RSS | CPU ms per pod |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range r.LargeMedian {
		done := doneCell(x)
		rel, rss, cpu := "–", "–", "–"
		if up.Throughput.Average > 0 {
			rel = fmt.Sprintf("%.2f×", x.Throughput.Average/up.Throughput.Average)
		}
		if x.PeakRSS > 0 {
			rss = fmt.Sprintf("%d MiB", x.PeakRSS>>20)
		}
		if x.CPUSeconds > 0 && x.Scheduled > 0 {
			cpu = fmt.Sprintf("%.2f", 1000*x.CPUSeconds/float64(x.Scheduled))
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s | %s | %s |\n", x.Name, x.Throughput.Average, x.Throughput.Perc50, x.Throughput.Perc90, x.Throughput.Perc99, x.Overall,
			rel, done, rss, cpu)
	}
	b.WriteString("\n**Target** (on the medians, reported, never asserted):\n\n")
	r.targetsTable(&b, func(c Check) bool { return strings.Contains(c.Target, " nodes ≥") })
	return b.String()
}

// PreemptionMarkdown renders the preemption workloads' tables and targets
// for docs/benchmarks.md.
func (r *Report) PreemptionMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s. Median of %d runs.\n", r.when(), r.Machine, r.Runs)
	fmt.Fprintf(&b, "\n**%s**: %d nodes of 4 CPUs, each with four low-priority pods of 900m; %d measured pods of priority 9999999 asking for 3970m, each of which must preempt all four; cap %s.\n\n",
		PreemptionBasic, r.Preemption.Nodes, r.Preemption.Pods, r.Preemption.Cap)
	r.preemptionTable(&b, r.PreemptionBasicMedian)
	fmt.Fprintf(&b, "\n**%s**: %d such nodes with their low-priority pods; %d measured pods of 100m, while a preemptor of priority 9999999 asking for 3970m arrives every %s (no more in all than there are nodes) and preempts a node's pods; cap %s.\n\n",
		PreemptionAsync, r.Preemption.AsyncNodes, r.Preemption.AsyncPods, r.Preemption.Interval, r.Preemption.Cap)
	r.preemptionTable(&b, r.PreemptionAsyncMedian)
	b.WriteString("\n**Targets** (on the medians, reported, never asserted):\n\n")
	r.targetsTable(&b, func(c Check) bool { return strings.Contains(c.Target, "Preemption") })
	return b.String()
}

// targetsTable renders the targets that keep selects.
func (r *Report) targetsTable(b *strings.Builder, keep func(Check) bool) {
	b.WriteString("| target | measured | met |\n|---|---|---|\n")
	for _, c := range r.Targets {
		if !keep(c) {
			continue
		}
		met := "no"
		if c.Met {
			met = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", c.Target, c.Measured, met)
	}
}

// preemptionTable renders one preemption workload's medians, with the
// phases of the preemptors.
func (r *Report) preemptionTable(b *strings.Builder, rs []Result) {
	up, _ := find(rs, func(x Result) string { return x.Name }, UpstreamLike09)
	b.WriteString("| scheduler | average pods/s | p50 | p90 | p99 | overall | × kube-scheduler (like 09) | measured pods scheduled | preemptors/victims | " + strings.Join(phaseNames, " | ") + " |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range rs {
		done := doneCell(x)
		rel := "–"
		if up.Throughput.Average > 0 {
			rel = fmt.Sprintf("%.2f×", x.Throughput.Average/up.Throughput.Average)
		}
		fmt.Fprintf(b, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |\n", x.Name, x.Throughput.Average, x.Throughput.Perc50, x.Throughput.Perc90, x.Throughput.Perc99, x.Overall,
			rel, done, strings.Join(PhaseRow(x), " | "))
	}
}

// labelColumn is the x where the bars start: wide enough for the longest
// label, right-aligned before it, at about 7 pixels a character of the
// 12-pixel sans-serif font (wider than its average, so that no label is
// cut off on the left), and at least 200.
func labelColumn(labels []string) int {
	longest := 0
	for _, l := range labels {
		longest = max(longest, utf8.RuneCountInString(l))
	}
	return max(200, 20+7*longest)
}

// SVG draws the median average throughput of each scheduler as horizontal
// bars, DNF runs hatched grey, the references in their own colour.
func (r *Report) SVG() string {
	const barH, gap, width = 22, 8, 440
	var names []string
	for _, x := range r.BasicMedian {
		names = append(names, x.Name)
	}
	left := labelColumn(names)
	top := 40
	height := top + len(r.BasicMedian)*(barH+gap) + 30
	maxV := 1.0
	for _, x := range r.BasicMedian {
		maxV = max(maxV, x.Throughput.Average)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left+width+90, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">SchedulingBasic, average pods/s (median of %d runs)</text>`+"\n", r.Runs)
	for i, x := range r.BasicMedian {
		y := top + i*(barH+gap)
		w := int(float64(width) * x.Throughput.Average / maxV)
		color := "#4477aa"
		switch {
		case x.DNF:
			color = "#bbbbbb"
		case x.Name == Ceiling:
			color = "#228833"
		case strings.HasPrefix(x.Name, "kube-scheduler"):
			color = "#ee6677"
		}
		label := fmt.Sprintf("%.1f", x.Throughput.Average)
		if x.DNF {
			label += " (DNF)"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+barH-6, html.EscapeString(x.Name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", left, y, max(w, 1), barH, color)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", left+max(w, 1)+6, y+barH-6, label)
	}
	fmt.Fprintf(&b, `<text x="10" y="%d" font-size="11" fill="#555">%s · %s</text>`+"\n", height-8, html.EscapeString(r.Date), html.EscapeString(r.Machine))
	b.WriteString("</svg>\n")
	return b.String()
}

// doneCell is a table's "pods scheduled" cell: how many in how long, or
// DNF with what was done by the cap.
func doneCell(x Result) string {
	if x.DNF {
		return fmt.Sprintf("DNF: %d in %.0f s", x.Scheduled, x.Seconds)
	}
	return fmt.Sprintf("%d in %.1f s", x.Scheduled, x.Seconds)
}
