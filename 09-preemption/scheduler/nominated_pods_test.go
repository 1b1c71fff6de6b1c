package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func withPriority(p *v1.Pod, priority int32) *v1.Pod { p.Spec.Priority = &priority; return p }

// TestRunFilterPluginsWithNominatedPods: a node's room freed for a
// nominated pod is taken for pods of lower or equal priority, and free for
// pods of higher priority and for the nominated pod itself.
func TestRunFilterPluginsWithNominatedPods(t *testing.T) {
	ctx := testContext(t)
	nominated := withPriority(makePod("nominated").req("2").obj(), 100)
	client := fake.NewClientset(makeNode("n").cpu("2").obj(), nominated)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(10))
	sched.queue.AddNominatedPod(klog.FromContext(ctx), mustPodInfo(t, nominated), &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: "n"})
	if err := sched.cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot); err != nil {
		t.Fatal(err)
	}
	nodes := sched.nodeInfoSnapshot.List()

	got := map[string]string{}
	for _, pod := range []*v1.Pod{
		withPriority(makePod("lower").req("1").obj(), 10),
		withPriority(makePod("equal").req("1").obj(), 100),
		withPriority(makePod("higher").req("1").obj(), 1000),
		nominated,
	} {
		state := framework.NewCycleState()
		if _, s, _ := sched.framework.RunPreFilterPlugins(ctx, state, pod, nodes); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		status := sched.framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodes[0])
		got[pod.Name] = status.Code().String() + " " + status.Message()
		// The plain filters, without the nominated pods, let every pod in.
		if s := sched.framework.RunFilterPlugins(ctx, state, pod, nodes[0]); !s.IsSuccess() {
			t.Errorf("RunFilterPlugins(%s) = %v, want success on the empty node", pod.Name, s)
		}
	}
	want := map[string]string{
		"lower":     "Unschedulable Insufficient cpu",
		"equal":     "Unschedulable Insufficient cpu",
		"higher":    "Success ",
		"nominated": "Success ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("filter verdicts on the node nominated for a 2-CPU pod of priority 100 (-want, +got):\n%s", diff)
	}
}

func mustPodInfo(t *testing.T, p *v1.Pod) *framework.PodInfo {
	t.Helper()
	pi, err := framework.NewPodInfo(p)
	if err != nil {
		t.Fatal(err)
	}
	return pi
}
