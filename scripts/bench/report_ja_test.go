package bench

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestJapaneseLeavesNoEnglish renders every table page the Japanese posts
// quote from one report, and checks that no English sentence or column
// name is left: only the schedulers' and workloads' names, units and
// numbers stay as they are.
func TestJapaneseLeavesNoEnglish(t *testing.T) {
	res := func(name string, avg float64) Result {
		return Result{Name: name, Throughput: Summary{Average: avg, Perc50: avg, Perc90: avg, Perc99: avg}, Overall: avg, Scheduled: 100, Seconds: 10, CPUSeconds: 1, PeakRSS: 100 << 20,
			Phases: &Phases{Preemptors: 10, Victims: 40, ToNominate: 5, ToDelete: 6, ToBind: 7}}
	}
	dnf := res("04-bind", 1)
	dnf.DNF = true
	r := &Report{
		Date: "2026-11-27 09:37 UTC", Machine: "linux/amd64, 2 x AMD EPYC", Runs: 3, Resumed: []string{"2026-11-28 10:00 UTC"},
		Basic:                 Config{Nodes: 100, InitPods: 100, Pods: 2000, Cap: 30 * time.Second, QPS: 5000, Burst: 5000},
		Large:                 Config{Nodes: 5000, InitPods: 1000, Pods: 10000, Cap: 5 * time.Minute, QPS: 5000, Burst: 5000},
		Requeue:               RequeueConfig{Nodes: 10, Pods: 100, Rounds: 5, Pause: time.Second},
		Preemption:            PreemptionConfig{Nodes: 1000, Pods: 1000, AsyncNodes: 1000, AsyncPods: 3000, Interval: 200 * time.Millisecond, Cap: 3 * time.Minute},
		Gang:                  GangConfig{Nodes: 5000, Groups: 1000, PodsPerGroup: 3, Cap: 3 * time.Minute},
		BasicMedian:           []Result{res(Ceiling, 250), res("08-queueinghint", 240), dnf, res(UpstreamLike08, 245)},
		RequeueMedian:         []RequeueResult{{Name: "08-queueinghint", Pods: 100, Attempts: 200, Wasted: 0, Bound: 100}, {Name: UpstreamLike08, Pods: 100, Attempts: 200, Wasted: 0, Bound: 100}},
		LargeMedian:           []Result{res("12-observability", 190), res(UpstreamDefaults, 175)},
		GangMedian:            []Result{res("11-gang-scheduling", 100), res(UpstreamLike11, 90)},
		PreemptionBasicMedian: []Result{res("09-preemption", 50), res(UpstreamLike09, 48)},
		PreemptionAsyncMedian: []Result{res("09-preemption", 60), res(UpstreamLike09, 61)},
		Targets: []Check{
			JudgeSearch([]Result{res("12-observability", 190), res(UpstreamDefaults, 175)}, "12-observability", 5000),
			{Target: "09-preemption PreemptionBasic ≥ 1.0× kube-scheduler (like 09)", Measured: "not measured"},
			{Target: "11-gang-scheduling GangScheduling ≥ 1.0× kube-scheduler (like 11)", Measured: "1.11× (100.0 vs 90.0 pods/s)", Met: true},
		},
	}
	// English words the pages write, outside the names of schedulers,
	// workloads and units.
	english := regexp.MustCompile(`\b(Measured|Median|runs|nodes|pods|measured|every|client|requests|burst|cap|scheduler|average|overall|scheduled|peak|target|met|yes|no|wait|attempts|wasted|bound|created|victims|gone|resumed|tables|arrives|each|asking)\b`)
	for name, page := range map[string]string{
		"Markdown":           r.Markdown("data/bench.svg"),
		"LargeMarkdown":      r.LargeMarkdown(),
		"GangMarkdown":       r.GangMarkdown(),
		"PreemptionMarkdown": r.PreemptionMarkdown(),
		"SummaryMarkdown":    r.SummaryMarkdown("docs/benchmarks.md"),
	} {
		t.Run(name, func(t *testing.T) {
			ja := Japanese(page)
			// The schedulers' names hold words of their own.
			text := ja
			for _, n := range []string{UpstreamLike08, UpstreamLike09, UpstreamLike11, UpstreamDefaults, "11-gang-scheduling", "09-preemption", "08-queueinghint", "12-observability", "04-bind", "docs/benchmarks.md", "data/bench.svg"} {
				text = strings.ReplaceAll(text, n, "")
			}
			if m := english.FindAllString(text, -1); len(m) > 0 {
				t.Errorf("English left in the Japanese page: %q\n%s", m, ja)
			}
			// Every number of the English page is on the Japanese one.
			num := regexp.MustCompile(`\d+(\.\d+)?`)
			for _, n := range num.FindAllString(page, -1) {
				if !strings.Contains(ja, n) {
					t.Errorf("the number %s is missing from the Japanese page", n)
				}
			}
		})
	}
}
