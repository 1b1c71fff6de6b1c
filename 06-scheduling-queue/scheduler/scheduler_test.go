package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	testingclock "k8s.io/utils/clock/testing"
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

// TestBuildClusterEventMap pins which events may move a pod that each
// enabled plugin rejected: the in-tree plugins' own EventsToRegister, the
// Gang plugin (no EnqueueExtensions) on every event, and no entry for the
// plugins that cannot reject a pod (PrioritySort, BalancedAllocation,
// NodeCost, DefaultBinder). docs/06-scheduling-queue.md shows this table.
func TestBuildClusterEventMap(t *testing.T) {
	ctx := testContext(t)
	fw, err := NewFramework(ctx, fake.NewClientset(), testingclock.NewFakeClock(time.Now()), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	eventMap, err := buildClusterEventMap(ctx, fw.EnqueueExtensions())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for e, plugins := range eventMap {
		got[eventString(e)] = sets.List(plugins)
	}
	gang := []string{"Gang"}
	want := map[string][]string{
		"Node/Add":                                     {"NodeName"},
		"Node/Add|UpdateNodeLabel":                     {"NodeAffinity"},
		"Node/Add|UpdateNodeTaint":                     {"NodeUnschedulable", "TaintToleration"},
		"Node/Add|UpdateNodeAllocatable":               {"NodeResourcesFit"},
		"AssignedPod/Delete":                           {"NodeResourcesFit"},
		"AssignedPod/UpdatePodScaleDown":               {"NodeResourcesFit"},
		"TargetPod/UpdatePodScaleDown":                 {"NodeResourcesFit"},
		"TargetPod/UpdatePodToleration":                {"NodeUnschedulable", "TaintToleration"},
		"TargetPod/UpdatePodSchedulingGatesEliminated": {"SchedulingGates"},
		"AssignedPod/All":                              gang,
		"UnscheduledPod/All":                           gang,
		"TargetPod/All":                                gang,
		"Node/All":                                     gang,
		"PersistentVolume/All":                         gang,
		"PersistentVolumeClaim/All":                    gang,
		"storage.k8s.io/CSINode/All":                   gang,
		"storage.k8s.io/CSIDriver/All":                 gang,
		"storage.k8s.io/CSIStorageCapacity/All":        gang,
		"storage.k8s.io/StorageClass/All":              gang,
		"resource.k8s.io/ResourceClaim/All":            gang,
		"resource.k8s.io/DeviceClass/All":              gang,
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
