package bench

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSumCounter(t *testing.T) {
	page := `# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods.
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="mini-scheduler",result="scheduled"} 120
scheduler_schedule_attempts_total{profile="mini-scheduler",result="unschedulable"} 35
scheduler_schedule_attempts_total_other 1000
scheduler_schedule_attempts_total{profile="mini-scheduler",result="error"} 2 1700000000000
`
	tests := []struct {
		name, page, metric, label string
		want                      int
		wantErr                   string
	}{
		{name: "summed over results, timestamps and longer names ignored", page: page, metric: attemptsMetric, want: 157},
		{name: "one result", page: page, metric: attemptsMetric, label: `result="scheduled"`, want: 120},
		{name: "a counter without labels", page: "x_total 3\n", metric: "x_total", want: 3},
		{name: "a label on a counter without labels", page: "x_total 3\n", metric: "x_total", label: `result="scheduled"`, want: 0},
		{name: "absent", page: "y_total 3\n", metric: "x_total", wantErr: "no x_total"},
		{name: "not a number", page: "x_total{a=\"b\"} many\n", metric: "x_total", wantErr: "invalid syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sumCounter(strings.NewReader(tt.page), tt.metric, tt.label)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

func basic(name string, avg float64, dnf bool) Result {
	return Result{Name: name, Throughput: Summary{Average: avg, Perc50: avg, Perc90: avg, Perc99: avg, Samples: 5}, Overall: avg, Scheduled: 500, DNF: dnf, Seconds: 5, PeakRSS: 100 << 20, CPUSeconds: 1}
}

func TestMedianBasic(t *testing.T) {
	runs := [][]Result{
		{basic("08", 100, false), basic("01", 3, true)},
		{basic("08", 300, false), basic("01", 9, false)},
		{basic("08", 200, false), basic("01", 6, true)},
	}
	want := []Result{basic("08", 200, false), basic("01", 6, true)}
	if diff := cmp.Diff(want, MedianBasic(runs)); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}

func TestJudge(t *testing.T) {
	rq := func(name string, wasted int) RequeueResult {
		return RequeueResult{Name: name, Pods: 100, Bound: 100, Attempts: 200 + wasted, Wasted: wasted}
	}
	tests := []struct {
		name    string
		basic   []Result
		requeue []RequeueResult
		want    []bool
	}{
		{
			name:    "every target met",
			basic:   []Result{basic(Ceiling, 250, false), basic("08", 210, false), basic(UpstreamLike08, 200, false)},
			requeue: []RequeueResult{rq("06", 900), rq("08", 10), rq(UpstreamLike08, 10)},
			want:    []bool{true, true, true, true},
		},
		{
			name:    "slower than upstream and the ceiling; more waste than upstream, not 5× less than 06",
			basic:   []Result{basic(Ceiling, 300, false), basic("08", 190, false), basic(UpstreamLike08, 200, false)},
			requeue: []RequeueResult{rq("06", 40), rq("08", 11), rq(UpstreamLike08, 10)},
			want:    []bool{false, false, false, false},
		},
		{
			name:    "a DNF never meets a target",
			basic:   []Result{basic(Ceiling, 100, false), basic("08", 300, true), basic(UpstreamLike08, 200, false)},
			requeue: []RequeueResult{rq("06", 900), rq("08", 0), rq(UpstreamLike08, 0)},
			want:    []bool{false, false, true, true},
		},
		{
			name: "missing figures are not met",
			want: []bool{false, false, false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []bool
			for _, c := range Judge(tt.basic, tt.requeue, "08", "06") {
				got = append(got, c.Met)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("met (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	r := &Report{
		Date: "2026-11-22", Machine: "linux/amd64", Runs: 3, Basic: Config{Nodes: 100, InitPods: 100, Pods: 500, QPS: 5000, Burst: 5000},
		BasicMedian:   []Result{basic(Ceiling, 400, false), basic("08", 200, false), basic(UpstreamLike08, 100, false), basic("01", 5, true)},
		RequeueMedian: []RequeueResult{{Name: UpstreamLike08, Pods: 100, Bound: 100, Attempts: 210, Wasted: 10}},
	}
	md := r.Markdown("data/bench.svg")
	for _, want := range []string{
		"| 08 | 200.0 | 200.0 | 200.0 | 200.0 | 200.0 | 2.00× | 0.50× | 500 in 5.0 s | 100 MiB | 2.00 |",
		"| 01 | 5.0 | 5.0 | 5.0 | 5.0 | 5.0 | 0.05× | 0.01× | DNF: 500 in 5 s | 100 MiB | 2.00 |",
		"| kube-scheduler (like 08) | 210 | 2.10 | 10 | 1.0× | 100/100 |",
		"![Average throughput of each scheduler, pods/s](data/bench.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, md)
		}
	}
	svg := r.SVG()
	if n := strings.Count(svg, "<rect x="); n != 4 {
		t.Errorf("%d bars, want 4:\n%s", n, svg)
	}
}

// TestCPUSeconds reads this test's own CPU time, after spending some.
func TestCPUSeconds(t *testing.T) {
	deadline := time.Now().Add(300 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	got, err := cpuSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got < 0.1 {
		t.Errorf("cpuSeconds = %v after 0.3 s of spinning, want ≥ 0.1", got)
	}
}

func TestJudgeSearch(t *testing.T) {
	tests := []struct {
		name  string
		basic []Result
		want  Check
	}{
		{
			name:  "faster than the defaults",
			basic: []Result{{Name: "10-x", Throughput: Summary{Average: 250}}, {Name: UpstreamDefaults, Throughput: Summary{Average: 200}}},
			want:  Check{Target: "10-x SchedulingBasic at 5000 nodes ≥ 1.0× kube-scheduler (defaults)", Measured: "1.25× (250.0 vs 200.0 pods/s)", Met: true},
		},
		{
			name:  "slower, and DNF",
			basic: []Result{{Name: "10-x", Throughput: Summary{Average: 100}, DNF: true}, {Name: UpstreamDefaults, Throughput: Summary{Average: 200}}},
			want:  Check{Target: "10-x SchedulingBasic at 5000 nodes ≥ 1.0× kube-scheduler (defaults)", Measured: "0.50× (100.0 vs 200.0 pods/s; most of its runs did not finish)"},
		},
		{
			name:  "faster, but most of its runs did not finish: not met",
			basic: []Result{{Name: "10-x", Throughput: Summary{Average: 250}, DNF: true}, {Name: UpstreamDefaults, Throughput: Summary{Average: 200}}},
			want:  Check{Target: "10-x SchedulingBasic at 5000 nodes ≥ 1.0× kube-scheduler (defaults)", Measured: "1.25× (250.0 vs 200.0 pods/s; most of its runs did not finish)"},
		},
		{
			name:  "no reference",
			basic: []Result{{Name: "10-x", Throughput: Summary{Average: 100}}},
			want:  Check{Target: "10-x SchedulingBasic at 5000 nodes ≥ 1.0× kube-scheduler (defaults)", Measured: "not measured"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, JudgeSearch(tt.basic, "10-x", 5000)); diff != "" {
				t.Errorf("check (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestSummaryMarkdown(t *testing.T) {
	r := &Report{
		Date: "d", Machine: "m", Runs: 3,
		Basic:       Config{Nodes: 100},
		Large:       Config{Nodes: 5000},
		BasicMedian: []Result{{Name: "01-a", Throughput: Summary{Average: 9.9}, DNF: true}, {Name: "08-h", Throughput: Summary{Average: 300}}, {Name: UpstreamDefaults, Throughput: Summary{Average: 280}}},
		LargeMedian: []Result{{Name: "08-h", Throughput: Summary{Average: 100}}, {Name: UpstreamDefaults, Throughput: Summary{Average: 200}}, {Name: UpstreamLike10, Throughput: Summary{Average: 190}}},
	}
	want := "SchedulingBasic, average pods/s, median of 3 runs, measured d on m ([all the tables](b.md)):\n\n" +
		"| scheduler | 100 nodes | 5000 nodes |\n|---|---:|---:|\n" +
		"| 01-a | 9.9 (DNF) | – |\n" +
		"| 08-h | 300.0 | 100.0 |\n" +
		"| kube-scheduler (defaults) | 280.0 | 200.0 |\n" +
		"| kube-scheduler (like 10) | – | 190.0 |\n"
	if diff := cmp.Diff(want, r.SummaryMarkdown("b.md")); diff != "" {
		t.Errorf("summary (-want, +got):\n%s", diff)
	}
}

func TestJudgeTrace(t *testing.T) {
	row := func(name string, avg, cpu float64) Result {
		return Result{Name: name, Throughput: Summary{Average: avg}, Scheduled: 1000, CPUSeconds: cpu}
	}
	tests := []struct {
		name  string
		basic []Result
		want  []Check
	}{
		{
			name:  "off within the margin, on slower",
			basic: []Result{row("11-x", 200, 1.6), row("12-y", 196, 1.6), row("12-y"+TracedSuffix, 150, 2.4)},
			want: []Check{
				{Target: "12-y SchedulingBasic ≥ 0.95× 11-x", Measured: "0.98× (196.0 vs 200.0 pods/s; 1.60 vs 1.60 CPU ms per pod)", Met: true},
				{Target: "12-y" + TracedSuffix + " SchedulingBasic against 12-y", Measured: "0.77× (150.0 vs 196.0 pods/s; 2.40 vs 1.60 CPU ms per pod)", Met: true},
			},
		},
		{
			name:  "off slower than the margin; on not measured",
			basic: []Result{row("11-x", 200, 1.6), row("12-y", 180, 1.9)},
			want: []Check{
				{Target: "12-y SchedulingBasic ≥ 0.95× 11-x", Measured: "0.90× (180.0 vs 200.0 pods/s; 1.90 vs 1.60 CPU ms per pod)"},
				{Target: "12-y" + TracedSuffix + " SchedulingBasic against 12-y", Measured: "not measured"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, JudgeTrace(tt.basic, "11-x", "12-y")); diff != "" {
				t.Errorf("JudgeTrace (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestPhasesWithUnboundPreemptors checks how a run that left preemptors
// unbound is reported: its count beside the preemptors, in each run and in
// the median, rather than a failed make bench.
func TestPhasesWithUnboundPreemptors(t *testing.T) {
	run := func(n, unbound int, toBind float64) []Result {
		return []Result{{Name: "kube", Phases: &Phases{Preemptors: n, Unbound: unbound, Victims: 4 * n, ToNominate: 10, ToDelete: 20, ToBind: toBind}}}
	}
	runs := [][]Result{run(1000, 0, 30), run(990, 10, 40), run(1000, 0, 35)}
	medians := []Result{{Name: "kube"}}
	MedianPhases(runs, medians)
	tests := []struct {
		name string
		r    Result
		want []string
	}{
		{"a run with none unbound", runs[0][0], []string{"1000/4000", "10", "20", "30"}},
		{"a run with ten unbound", runs[1][0], []string{"990/3960 (10 unbound)", "10", "20", "40"}},
		{"the median", medians[0], []string{"1000/4000", "10", "20", "35"}},
		{"no phases", Result{Name: "x"}, []string{"–", "–", "–", "–"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, PhaseRow(tt.r)); diff != "" {
			t.Errorf("%s: PhaseRow (-want +got):\n%s", tt.name, diff)
		}
	}
}
