package preemption

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// victimPod is a running pod of the given priority, started start minutes
// after t0.
func victimPod(name string, priority int32, start int, labels map[string]string) *v1.Pod {
	st := metav1.NewTime(t0.Add(time.Duration(start) * time.Minute))
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels},
		Spec:       v1.PodSpec{Priority: &priority},
		Status:     v1.PodStatus{StartTime: &st},
	}
}

// TestPickOneNodeForPreemption: each of upstream's criteria decides one
// case on its own, the ones before it being tied.
func TestPickOneNodeForPreemption(t *testing.T) {
	tests := []struct {
		name  string
		nodes map[string]*extenderv1.Victims
		want  string
	}{
		{
			name: "1. fewest PDB violations, though its victims matter more",
			nodes: map[string]*extenderv1.Victims{
				"a": {Pods: []*v1.Pod{victimPod("a1", 10, 0, nil)}, NumPDBViolations: 1},
				"b": {Pods: []*v1.Pod{victimPod("b1", 50, 0, nil), victimPod("b2", 40, 0, nil)}, NumPDBViolations: 0},
			},
			want: "b",
		},
		{
			name: "2. lowest priority of the most important victim",
			nodes: map[string]*extenderv1.Victims{
				"a": {Pods: []*v1.Pod{victimPod("a1", 30, 0, nil)}},
				"b": {Pods: []*v1.Pod{victimPod("b1", 20, 0, nil), victimPod("b2", 20, 0, nil), victimPod("b3", 20, 0, nil)}},
			},
			want: "b",
		},
		{
			name: "3. smallest sum of priorities",
			nodes: map[string]*extenderv1.Victims{
				"a": {Pods: []*v1.Pod{victimPod("a1", 20, 0, nil), victimPod("a2", 15, 0, nil)}},
				"b": {Pods: []*v1.Pod{victimPod("b1", 20, 0, nil), victimPod("b2", 5, 0, nil)}},
			},
			want: "b",
		},
		{
			name: "3. negative priorities do not favour more victims",
			nodes: map[string]*extenderv1.Victims{
				"a": {Pods: []*v1.Pod{victimPod("a1", -10, 0, nil), victimPod("a2", -10, 0, nil)}},
				"b": {Pods: []*v1.Pod{victimPod("b1", -10, 0, nil)}},
			},
			want: "b",
		},
		{
			// The sums, each priority offset by MaxInt32+1, tie: 2^32-1.
			name: "4. fewest victims",
			nodes: map[string]*extenderv1.Victims{
				"a": {Pods: []*v1.Pod{victimPod("a1", math.MaxInt32, 0, nil), victimPod("a2", math.MinInt32, 0, nil)}},
				"b": {Pods: []*v1.Pod{victimPod("b1", math.MaxInt32, 0, nil)}},
			},
			want: "b",
		},
		{
			name: "5. latest start among the most important victims",
			nodes: map[string]*extenderv1.Victims{
				"a": {Pods: []*v1.Pod{victimPod("a1", 10, 5, nil)}},
				"b": {Pods: []*v1.Pod{victimPod("b1", 10, 9, nil)}},
				"c": {Pods: []*v1.Pod{victimPod("c1", 10, 1, nil)}},
			},
			want: "b",
		},
		{
			name: "one candidate",
			nodes: map[string]*extenderv1.Victims{
				"only": {Pods: []*v1.Pod{victimPod("o1", 100, 0, nil)}, NumPDBViolations: 3},
			},
			want: "only",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			// Map order varies between runs: a case that depended on it
			// would fail sometimes.
			for range 10 {
				if diff := cmp.Diff(tt.want, pickOneNodeForPreemption(logger, tt.nodes)); diff != "" {
					t.Fatalf("picked node (-want, +got):\n%s", diff)
				}
			}
		})
	}
}

func pdb(name string, selector map[string]string, allowed int32, disrupted ...string) *policy.PodDisruptionBudget {
	p := &policy.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       policy.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}},
		Status:     policy.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
	if len(disrupted) > 0 {
		p.Status.DisruptedPods = map[string]metav1.Time{}
		for _, d := range disrupted {
			p.Status.DisruptedPods[d] = metav1.NewTime(t0)
		}
	}
	return p
}

// TestFilterVictimsWithPDBViolation: a budget allows as many evictions as
// its disruptionsAllowed, counted in the victims' order; pods it does not
// select, pods it lists as disrupted already, and budgets with an empty
// selector or of another namespace are not charged.
func TestFilterVictimsWithPDBViolation(t *testing.T) {
	web := map[string]string{"app": "web"}
	tests := []struct {
		name      string
		victims   []*v1.Pod
		budgets   []*policy.PodDisruptionBudget
		violating []string
		fine      []string
	}{
		{
			name:    "no budget",
			victims: []*v1.Pod{victimPod("w1", 0, 0, web), victimPod("w2", 0, 0, web)},
			fine:    []string{"w1", "w2"},
		},
		{
			name:      "one disruption allowed: the second pod violates",
			victims:   []*v1.Pod{victimPod("w1", 0, 0, web), victimPod("w2", 0, 0, web), victimPod("other", 0, 0, map[string]string{"app": "db"})},
			budgets:   []*policy.PodDisruptionBudget{pdb("web", web, 1)},
			violating: []string{"w2"},
			fine:      []string{"w1", "other"},
		},
		{
			name:      "a pod being disrupted already is not charged",
			victims:   []*v1.Pod{victimPod("w1", 0, 0, web), victimPod("w2", 0, 0, web)},
			budgets:   []*policy.PodDisruptionBudget{pdb("web", web, 0, "w1")},
			violating: []string{"w2"},
			fine:      []string{"w1"},
		},
		{
			name:    "an empty selector selects nothing",
			victims: []*v1.Pod{victimPod("w1", 0, 0, web)},
			budgets: []*policy.PodDisruptionBudget{pdb("all", nil, 0)},
			fine:    []string{"w1"},
		},
		{
			name:    "a budget of another namespace",
			victims: []*v1.Pod{victimPod("w1", 0, 0, web)},
			budgets: func() []*policy.PodDisruptionBudget {
				p := pdb("web", web, 0)
				p.Namespace = "other"
				return []*policy.PodDisruptionBudget{p}
			}(),
			fine: []string{"w1"},
		},
	}
	name := func(v Victim) string { return v.Pods()[0].GetPod().Name }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var victims []Victim
			for _, p := range tt.victims {
				pi, err := framework.NewPodInfo(p)
				if err != nil {
					t.Fatal(err)
				}
				victims = append(victims, NewPodVictim(pi, nil))
			}
			violating, fine := FilterVictimsWithPDBViolation(victims, tt.budgets)
			var gotViolating, gotFine []string
			for _, v := range violating {
				gotViolating = append(gotViolating, name(v.Victim))
			}
			for _, v := range fine {
				gotFine = append(gotFine, name(v))
			}
			if diff := cmp.Diff(tt.violating, gotViolating); diff != "" {
				t.Errorf("violating victims (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.fine, gotFine); diff != "" {
				t.Errorf("non-violating victims (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestPodTerminatingByPreemption: only a pod being deleted with the
// scheduler's DisruptionTarget condition.
func TestPodTerminatingByPreemption(t *testing.T) {
	now := metav1.NewTime(t0)
	cond := func(reason string) []v1.PodCondition {
		return []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: reason}}
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{"preempted and terminating", &v1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: v1.PodStatus{Conditions: cond(v1.PodReasonPreemptionByScheduler)}}, true},
		{"preempted, not yet deleted", &v1.Pod{Status: v1.PodStatus{Conditions: cond(v1.PodReasonPreemptionByScheduler)}}, false},
		{"terminating for another reason", &v1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: v1.PodStatus{Conditions: cond("EvictionByEvictionAPI")}}, false},
		{"terminating, no condition", &v1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PodTerminatingByPreemption(tt.pod); got != tt.want {
				t.Errorf("PodTerminatingByPreemption = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMoreImportantVictim: priority first; at equal priority a pod
// group's victim (a member, or a group evicted whole) before a pod on its
// own; then the larger group; then the one that started earlier. These are
// upstream's rules (MoreImportantVictim, framework/preemption/util.go).
func TestMoreImportantVictim(t *testing.T) {
	mk := func(keyType fwk.EntityKeyType, priority int32, starts ...int) Victim {
		var pis []fwk.PodInfo
		for i, st := range starts {
			pi, err := framework.NewPodInfo(victimPod(fmt.Sprintf("p%d", i), priority, st, nil))
			if err != nil {
				t.Fatal(err)
			}
			pis = append(pis, pi)
		}
		v, err := NewVictim(pis, priority, keyType)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name   string
		v1, v2 Victim
		want   bool
	}{
		{name: "higher priority", v1: mk(fwk.PodKeyType, 10, 5), v2: mk(fwk.PodGroupKeyType, 5, 0), want: true},
		{name: "a group's member before a pod on its own, whatever their start", v1: mk(fwk.PodGroupKeyType, 0, 5), v2: mk(fwk.PodKeyType, 0, 0), want: true},
		{name: "a pod on its own after a group's member", v1: mk(fwk.PodKeyType, 0, 0), v2: mk(fwk.PodGroupKeyType, 0, 5), want: false},
		{name: "two pods: the earlier start", v1: mk(fwk.PodKeyType, 0, 0), v2: mk(fwk.PodKeyType, 0, 5), want: true},
		{name: "two groups: the larger", v1: mk(fwk.PodGroupKeyType, 0, 9, 9), v2: mk(fwk.PodGroupKeyType, 0, 0), want: true},
		{name: "two groups of one size: the earlier start", v1: mk(fwk.PodGroupKeyType, 0, 7, 3), v2: mk(fwk.PodGroupKeyType, 0, 4, 5), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, MoreImportantVictim(tt.v1, tt.v2)); diff != "" {
				t.Errorf("MoreImportantVictim (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestFilterVictimsWithPDBViolationGroup: a victim is evicted or spared
// whole, so one of its pods over a budget makes the whole victim
// violating, and ViolateCount counts its pods that are (upstream's
// FilterVictimsWithPDBViolation, framework/preemption/util.go).
func TestFilterVictimsWithPDBViolationGroup(t *testing.T) {
	web := map[string]string{"app": "web"}
	var pis []fwk.PodInfo
	for _, name := range []string{"w1", "w2", "w3"} {
		pi, err := framework.NewPodInfo(victimPod(name, 0, 0, web))
		if err != nil {
			t.Fatal(err)
		}
		pis = append(pis, pi)
	}
	group, err := NewVictim(pis, 0, fwk.PodGroupKeyType)
	if err != nil {
		t.Fatal(err)
	}
	violating, fine := FilterVictimsWithPDBViolation([]Victim{group}, []*policy.PodDisruptionBudget{pdb("web", web, 1)})
	got := [2]int{len(fine), 0}
	if len(violating) == 1 {
		got[1] = violating[0].ViolateCount
	}
	if diff := cmp.Diff([2]int{0, 2}, got); diff != "" {
		t.Errorf("non-violating victims, and the violating victim's ViolateCount (-want, +got):\n%s", diff)
	}
}
