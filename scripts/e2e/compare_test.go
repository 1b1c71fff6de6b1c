package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTies reads logs in the format both the chapters and kube-scheduler
// write, and finds the pods whose last attempt had a tie at the top.
func TestTies(t *testing.T) {
	log := strings.Join([]string{
		`I1122 schedule_one.go:50] "Attempting to schedule pod" pod="ns/clear"`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/clear" node="a" score=300`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/clear" node="b" score=200`,
		`I1122 schedule_one.go:50] "Attempting to schedule pod" pod="ns/tied"`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/tied" node="a" score=300`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/tied" node="c" score=300`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/tied" node="b" score=100`,
		`I1122 schedule_one.go:50] "Attempting to schedule pod" pod="ns/retried"`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/retried" node="a" score=5`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/retried" node="b" score=5`,
		`I1122 schedule_one.go:50] "Attempting to schedule pod" pod="ns/retried"`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/retried" node="a" score=9`,
		`I1122 schedule_one.go:160] "Calculated node's final score for pod" pod="ns/retried" node="b" score=5`,
		`I1122 schedule_one.go:60] "Scheduling decision" pod="ns/random" attempt=1 result="scheduled" node="a" evaluatedNodes=3 feasibleNodes=3`,
		`I1122 schedule_one.go:60] "Scheduling decision" pod="ns/only" attempt=1 result="scheduled" node="a" evaluatedNodes=3 feasibleNodes=1`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "scheduler.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Ties(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"ns/tied":   {"a", "c"},
		"ns/random": {"3 feasible nodes, no scores"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ties (-want, +got):\n%s", diff)
	}
}

// TestUpstreamConfig: chapter 02 gets filters only, 03 on the score plugins
// with upstream's weights.
func TestUpstreamConfig(t *testing.T) {
	two, three := UpstreamConfig(2, "/k", ChapterClient), UpstreamConfig(3, "/k", ChapterClient)
	for _, want := range []string{`disabled: [{name: "*"}]`, "percentageOfNodesToScore: 100", "schedulerName: mini-scheduler", "qps: 50", "burst: 100",
		"filter:\n      enabled: [{name: NodeName}, {name: NodeUnschedulable}, {name: TaintToleration}, {name: NodeAffinity}, {name: NodeResourcesFit}]"} {
		if !strings.Contains(two, want) || !strings.Contains(three, want) {
			t.Errorf("the configurations lack %q", want)
		}
	}
	if strings.Contains(two, "score:") {
		t.Error("chapter 02's configuration scores")
	}
	nine := UpstreamConfig(9, "/k", ChapterClient)
	for _, want := range []string{"postFilter:\n      enabled: [{name: DefaultPreemption}]", "preEnqueue:\n      enabled: [{name: SchedulingGates}, {name: DefaultPreemption}]"} {
		if !strings.Contains(nine, want) {
			t.Errorf("chapter 09's configuration lacks %q:\n%s", want, nine)
		}
	}
	if ten := UpstreamConfig(10, "/k", ChapterClient); strings.Contains(ten, "percentageOfNodesToScore") || !strings.Contains(ten, "DefaultPreemption") {
		t.Errorf("chapter 10's configuration must search as kube-scheduler does by default, and preempt:\n%s", ten)
	}
	if strings.Contains(three, "DefaultPreemption") {
		t.Errorf("chapter 03's configuration preempts:\n%s", three)
	}
	defaults := UpstreamDefaultsConfig("/k", Client{QPS: 5000, Burst: 5000})
	for _, want := range []string{"qps: 5000\n", "burst: 5000\n", "schedulerName: mini-scheduler", "leaderElect: false"} {
		if !strings.Contains(defaults, want) {
			t.Errorf("the defaults configuration lacks %q:\n%s", want, defaults)
		}
	}
	if strings.Contains(defaults, "plugins:") || strings.Contains(defaults, "percentageOfNodesToScore") {
		t.Errorf("the defaults configuration changes the profile:\n%s", defaults)
	}
	if !strings.Contains(three, "{name: TaintToleration, weight: 3}, {name: NodeAffinity, weight: 2}, {name: NodeResourcesFit, weight: 1}, {name: NodeResourcesBalancedAllocation, weight: 1}") {
		t.Errorf("chapter 03's score plugins:\n%s", three)
	}
}
