package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPackSizes(t *testing.T) {
	for _, n := range []int{1, 6, 50} {
		sizes := PackSizes(n, 7)
		var sum int64
		for _, s := range sizes {
			if s < 500 || s > 2000 || s%500 != 0 {
				t.Fatalf("n=%d: size %dm, want 500m to 2000m in steps of 500m", n, s)
			}
			sum += s
		}
		if diff := cmp.Diff(int64(n*nodeMilliCPU), sum); diff != "" {
			t.Errorf("n=%d: total CPU (-want, +got):\n%s", n, diff)
		}
		if diff := cmp.Diff(sizes, PackSizes(n, 7)); diff != "" {
			t.Errorf("n=%d: the same seed gave other sizes (-first, +second):\n%s", n, diff)
		}
	}
}

func TestFirstFitDecreasing(t *testing.T) {
	tests := []struct {
		name      string
		sizes     []int64
		maxBins   int
		wantBins  int
		wantLeft  int
		wantLower int
	}{
		{name: "nothing", maxBins: 3, wantBins: 0, wantLeft: 0, wantLower: 0},
		{name: "exact pairs", sizes: []int64{1000, 3000, 2000, 2000, 3000, 1000}, maxBins: 5, wantBins: 3, wantLower: 3},
		// Largest first: 2500 2500 2000 1500 1500 → [2500 1500] [2500 1500] [2000].
		{name: "largest first", sizes: []int64{1500, 2500, 2000, 1500, 2500}, maxBins: 5, wantBins: 3, wantLower: 3},
		// FFD opens a bin per 2100 and cannot fit the 1900s beside them:
		// [2100 1900] pairs exist, and it finds them.
		{name: "pairs that fill bins", sizes: []int64{2100, 1900, 2100, 1900}, maxBins: 2, wantBins: 2, wantLower: 2},
		// Three of 2100 need three bins; with two, one is left out.
		{name: "more than the bins hold", sizes: []int64{2100, 2100, 2100}, maxBins: 2, wantBins: 2, wantLeft: 1, wantLower: 2},
		{name: "larger than a bin", sizes: []int64{5000}, maxBins: 3, wantBins: 0, wantLeft: 1, wantLower: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bins, left := FirstFitDecreasing(tt.sizes, 4000, tt.maxBins)
			if diff := cmp.Diff([2]int{tt.wantBins, tt.wantLeft}, [2]int{bins, left}); diff != "" {
				t.Errorf("bins and left out (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLower, LowerBound(tt.sizes, 4000)); diff != "" {
				t.Errorf("lower bound (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestSpreadStats(t *testing.T) {
	tests := []struct {
		name             string
		pods             []int
		cpu              []int64
		wantMin, wantMax int
		wantCV           float64
	}{
		{name: "even", pods: []int{2, 2, 2}, cpu: []int64{200, 200, 200}, wantMin: 2, wantMax: 2, wantCV: 0},
		// mean 200, deviations ±200 on two nodes, 0 on one: sd = sqrt(80000/3).
		{name: "skewed", pods: []int{0, 2, 4}, cpu: []int64{0, 200, 400}, wantMin: 0, wantMax: 4, wantCV: 0.816496580927726},
		{name: "empty cluster", pods: []int{0, 0}, cpu: []int64{0, 0}, wantMin: 0, wantMax: 0, wantCV: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			minPods, maxPods, cv := SpreadStats(tt.pods, tt.cpu)
			if diff := cmp.Diff([2]int{tt.wantMin, tt.wantMax}, [2]int{minPods, maxPods}); diff != "" {
				t.Errorf("min and max (-want, +got):\n%s", diff)
			}
			if cv < tt.wantCV-1e-9 || cv > tt.wantCV+1e-9 {
				t.Errorf("CV = %v, want %v", cv, tt.wantCV)
			}
		})
	}
}

func TestJudgeQuality(t *testing.T) {
	median := []QualityResult{
		{Name: "10-x", Workload: Spread, MinPods: 9, MaxPods: 11, Seconds: 10},
		{Name: UpstreamDefaults, Workload: Spread, MinPods: 8, MaxPods: 12, Seconds: 9},
		{Name: "10-x (power of two choices)", Workload: Spread, MinPods: 5, MaxPods: 15, Seconds: 7},
		{Name: "10-x", Workload: PackHalf, MinPods: 0, MaxPods: 99},
	}
	got := JudgeQuality(median, "10-x", "10-x (power of two choices)")
	want := []Check{
		{Target: "10-x spread skew ≤ kube-scheduler (defaults)'s", Measured: "2 vs 4 pods (CPU CV 0.000 vs 0.000)", Met: true},
		{Target: "10-x (power of two choices) against 10-x and kube-scheduler (defaults) (reported, no target)", Measured: "skew 10 vs 2 and 4; time to place 7.0 s vs 10.0 s and 9.0 s", Met: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checks (-want, +got):\n%s", diff)
	}
	if got := JudgeQuality(median[1:2], "10-x", "p2"); got[0].Met || got[0].Measured != "not measured" {
		t.Errorf("without 10's figures: %+v, want not measured and not met", got[0])
	}
}

// TestNamespaceFitsANodeName: a long target name still gives node names
// (namespace + "-node-NNNNN") of 63 bytes at most, and two names that
// differ only past the cut stay apart.
func TestNamespaceFitsANodeName(t *testing.T) {
	a := namespace("spread", Target{Name: "10-percentage-of-nodes-to-score (power of two choices)"}, 1)
	b := namespace("spread", Target{Name: "10-percentage-of-nodes-to-score (power of two choices), d=3"}, 1)
	for _, ns := range []string{a, b} {
		if n := len(ns + "-node-00000"); n > 63 {
			t.Errorf("%s: node names of %d bytes, want 63 at most", ns, n)
		}
	}
	if a == b {
		t.Errorf("two targets share the namespace %s", a)
	}
	if diff := cmp.Diff("basic-10-percentage-of-nodes-1", namespace("basic", Target{Name: "10-percentage-of-nodes"}, 1)); diff != "" {
		t.Errorf("a short name is cut (-want, +got):\n%s", diff)
	}
}
