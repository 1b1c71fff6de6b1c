package scheduler

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	testingclock "k8s.io/utils/clock/testing"

	internalcache "minisched/12-observability/scheduler/backend/cache"
	"minisched/12-observability/scheduler/backend/queue"
)

// eventString spells an event as "Resource/Action|Action".
func eventString(e fwk.ClusterEvent) string {
	if e.ActionType == fwk.All {
		return string(e.Resource) + "/All"
	}
	var actions []string
	for a := fwk.ActionType(1); a < fwk.All && a != 0; a <<= 1 {
		if e.ActionType&a != 0 {
			actions = append(actions, a.String())
		}
	}
	return string(e.Resource) + "/" + strings.Join(actions, "|")
}

// allUpdates lists the names of every update action, in order: what an
// event registered for fwk.Update prints as.
func allUpdates() []string {
	var out []string
	for a := fwk.ActionType(1); a < fwk.All && a != 0; a <<= 1 {
		if fwk.Update&a != 0 {
			out = append(out, a.String())
		}
	}
	return out
}

// newHintMap builds the chapter's framework and its queueing hint map.
func newHintMap(t *testing.T, ctx context.Context) (*Framework, queue.QueueingHintMap) {
	t.Helper()
	client := fake.NewClientset()
	fw, err := NewFramework(ctx, client, informers.NewSharedInformerFactory(client, 0), events.NewFakeRecorder(10), internalcache.NewEmptySnapshot(), internalcache.New(), testingclock.NewFakeClock(time.Now()), parallelize.DefaultParallelism, "")
	if err != nil {
		t.Fatal(err)
	}
	hintMap, err := buildQueueingHintMap(ctx, fw.EnqueueExtensions())
	if err != nil {
		t.Fatal(err)
	}
	return fw, hintMap
}

// TestBuildQueueingHintMap pins which events may move a pod that each
// enabled plugin rejected: the in-tree plugins' own EventsToRegister, the
// GangScheduling's new pods and PodGroups, and no entry for the plugins
// that cannot reject a pod (PrioritySort, BalancedAllocation, NodeCost, DefaultBinder). Every
// entry has a hint, and the in-tree plugins bring their own.
// docs/08-queueinghint.md shows this table.
func TestBuildQueueingHintMap(t *testing.T) {
	ctx := testContext(t)
	fw, hintMap := newHintMap(t, ctx)
	got := map[string][]string{}
	for e, hintFns := range hintMap {
		for _, h := range hintFns {
			if h.QueueingHintFn == nil {
				t.Errorf("%s: plugin %s has no hint", eventString(e), h.PluginName)
			}
			got[eventString(e)] = append(got[eventString(e)], h.PluginName)
		}
		slices.Sort(got[eventString(e)])
	}
	want := map[string][]string{
		"Node/Add":                                     {"NodeName"},
		"Node/Add|UpdateNodeLabel":                     {"NodeAffinity"},
		"Node/Add|UpdateNodeTaint":                     {"NodeUnschedulable", "TaintToleration"},
		"Node/Add|UpdateNodeAllocatable":               {"NodeResourcesFit"},
		"AssignedPod/Delete":                           {"DefaultPreemption", "NodeResourcesFit"},
		"AssignedPod/UpdatePodScaleDown":               {"NodeResourcesFit"},
		"TargetPod/UpdatePodScaleDown":                 {"NodeResourcesFit"},
		"TargetPod/UpdatePodToleration":                {"NodeUnschedulable", "TaintToleration"},
		"TargetPod/UpdatePodSchedulingGatesEliminated": {"SchedulingGates"},
		"AssignedPod/Add":                              {"GangScheduling"},
		"UnscheduledPod/Add":                           {"GangScheduling"},
		"scheduling.k8s.io/PodGroup/Add":               {"GangScheduling"},
		"scheduling.k8s.io/PodGroup/" + strings.Join(allUpdates(), "|"): {"GangScheduling"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events and the plugins that registered them (-want, +got):\n%s", diff)
	}
	for _, e := range fw.EnqueueExtensions() {
		if e.Name() == "PrioritySort" || e.Name() == "NodeResourcesBalancedAllocation" || e.Name() == "NodeCost" || e.Name() == "DefaultBinder" {
			t.Errorf("%s cannot reject a pod, but its events were collected", e.Name())
		}
	}
}

// TestNodeAffinityHint asks the hint that NodeAffinity registered for node
// label changes, as the queue does, about changes that do and do not give
// a node the label a pod wants.
func TestNodeAffinityHint(t *testing.T) {
	ctx := testContext(t)
	logger := klog.FromContext(ctx)
	_, hintMap := newHintMap(t, ctx)
	hints := hintMap[fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}]
	if len(hints) != 1 || hints[0].PluginName != "NodeAffinity" {
		t.Fatalf("hints for node label changes: %v", hints)
	}
	pod := makePod("p").nodeSelector("disk", "ssd").obj()
	tests := []struct {
		name     string
		old, new *v1.Node
		want     fwk.QueueingHint
	}{
		{"another label", makeNode("n").obj(), makeNode("n").label("color", "blue").obj(), fwk.QueueSkip},
		{"the wrong value", makeNode("n").obj(), makeNode("n").label("disk", "hdd").obj(), fwk.QueueSkip},
		{"the label the pod wants", makeNode("n").obj(), makeNode("n").label("disk", "ssd").obj(), fwk.Queue},
		{"a new node with it", nil, makeNode("n").label("disk", "ssd").obj(), fwk.Queue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var oldObj any
			if tt.old != nil {
				oldObj = tt.old
			}
			got, err := hints[0].QueueingHintFn(logger, pod, oldObj, tt.new)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}
