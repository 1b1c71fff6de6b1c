package scheduler

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
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

// fakePostFilter answers with a fixed result and status, and records that
// it ran.
type fakePostFilter struct {
	name   string
	node   string
	code   fwk.Code
	ran    *[]string
	result bool
}

func (p *fakePostFilter) Name() string { return p.name }
func (p *fakePostFilter) PostFilter(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	*p.ran = append(*p.ran, p.name)
	var r *fwk.PostFilterResult
	if p.result {
		r = framework.NewPostFilterResultWithNominatedNode(p.node)
	}
	return r, fwk.NewStatus(p.code, p.name+" says "+p.code.String())
}

// TestRunPostFilterPlugins: the first Success or UnschedulableAndUnresolvable
// ends the loop, an Unschedulable lets the next plugin try, and the result
// of the last plugin that named a node is kept.
func TestRunPostFilterPlugins(t *testing.T) {
	type verdict struct {
		Ran       []string
		Nominated string
		Status    string
	}
	pl := func(name string, code fwk.Code, node string) *fakePostFilter {
		return &fakePostFilter{name: name, code: code, node: node, result: node != ""}
	}
	tests := []struct {
		name    string
		plugins []*fakePostFilter
		want    verdict
	}{
		{
			name:    "the first success wins",
			plugins: []*fakePostFilter{pl("a", fwk.Success, "n1"), pl("b", fwk.Success, "n2")},
			want:    verdict{Ran: []string{"a"}, Nominated: "n1", Status: "Success: a says Success"},
		},
		{
			name:    "an unschedulable plugin lets the next one try",
			plugins: []*fakePostFilter{pl("a", fwk.Unschedulable, ""), pl("b", fwk.Success, "n2")},
			want:    verdict{Ran: []string{"a", "b"}, Nominated: "n2", Status: "Success: b says Success"},
		},
		{
			name:    "unresolvable stops the loop",
			plugins: []*fakePostFilter{pl("a", fwk.UnschedulableAndUnresolvable, ""), pl("b", fwk.Success, "n2")},
			want:    verdict{Ran: []string{"a"}, Status: "UnschedulableAndUnresolvable a: a says UnschedulableAndUnresolvable"},
		},
		{
			name:    "all unschedulable: the reasons together, the first plugin named, a node kept",
			plugins: []*fakePostFilter{pl("a", fwk.Unschedulable, ""), pl("b", fwk.Unschedulable, "n2")},
			want:    verdict{Ran: []string{"a", "b"}, Nominated: "n2", Status: "Unschedulable a: a says Unschedulable, b says Unschedulable"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var ran []string
			f := &Framework{}
			for _, p := range tt.plugins {
				p.ran = &ran
				f.postFilterPlugins = append(f.postFilterPlugins, p)
			}
			r, s := f.RunPostFilterPlugins(ctx, framework.NewCycleState(), makePod("p").obj(), framework.NewDefaultNodeToStatus())
			got := verdict{Ran: ran, Status: s.Code().String()}
			if s.Plugin() != "" {
				got.Status += " " + s.Plugin()
			}
			got.Status += ": " + s.Message()
			if r != nil {
				got.Nominated = r.NominatedNodeName
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PostFilter verdict (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestEvaluateNominatedNode: a pod with a nominated node where it fits is
// placed there at once, with only that node evaluated, although others
// would score higher; without the nomination, or where it no longer fits,
// every node is looked at.
func TestEvaluateNominatedNode(t *testing.T) {
	type placed struct {
		Host      string
		Evaluated int
	}
	tests := []struct {
		name      string
		nominated string
		want      placed
	}{
		{name: "nominated to the fullest node", nominated: "busy", want: placed{Host: "busy", Evaluated: 1}},
		{name: "no nomination: the emptiest node", want: placed{Host: "empty", Evaluated: 2}},
		{name: "nominated to a node that is gone", nominated: "gone", want: placed{Host: "empty", Evaluated: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			client := fake.NewClientset(
				makeNode("busy").cpu("2").obj(), makeNode("empty").cpu("8").obj(),
				makePod("running").req("1").node("busy").obj())
			sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(10))
			pod := makePod("p").req("1").obj()
			pod.Status.NominatedNodeName = tt.nominated
			result, err := schedulePodNow(t, ctx, sched, pod)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, placed{Host: result.SuggestedHost, Evaluated: result.EvaluatedNodes}); diff != "" {
				t.Errorf("placement (-want, +got):\n%s", diff)
			}
		})
	}
}
