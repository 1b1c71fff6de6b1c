package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// TestScheduleOnePodGroup runs one pod-group cycle and checks what it
// decided: which members were bound, the members' PodScheduled conditions,
// the PodGroup's condition, and that nothing of the simulation stays in the
// snapshot or the cache.
func TestScheduleOnePodGroup(t *testing.T) {
	insufficient := "False Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."
	tests := []struct {
		name      string
		nodes     int // nodes of 1 CPU
		members   int // members of 1 CPU
		group     *schedulingv1beta1.PodGroup
		wantBound int
		// wantConditions are the members' PodScheduled conditions, in the
		// group's order, for the members that were not bound.
		wantConditions []string
		wantGroup      string
	}{
		{
			name: "a gang of four with room for three binds none", nodes: 3, members: 4, group: makePodGroup("g", 4),
			wantConditions: []string{
				"False Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
				"False Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
				"False Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
				insufficient,
			},
			wantGroup: "False Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
		},
		{
			name: "a gang of four with room for four binds all", nodes: 4, members: 4, group: makePodGroup("g", 4),
			wantBound: 4, wantGroup: "True Scheduled: ",
		},
		{
			name: "minCount three of four with room for three binds three", nodes: 3, members: 4, group: makePodGroup("g", 3),
			wantBound: 3, wantConditions: []string{insufficient}, wantGroup: "True Scheduled: ",
		},
		{
			name: "a basic group binds what fits", nodes: 1, members: 2,
			group:     &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "g"}, Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}},
			wantBound: 1, wantConditions: []string{"False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."}, wantGroup: "True Scheduled: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			objs := []runtime.Object{tt.group}
			for i := range tt.nodes {
				objs = append(objs, makeNode(fmt.Sprintf("node-%d", i)).cpu("1").obj())
			}
			var members []*v1.Pod
			for i := range tt.members {
				p := makePod(fmt.Sprintf("m-%d", i)).group("g").req("1").obj()
				members = append(members, p)
				objs = append(objs, p)
			}
			client := fake.NewClientset(objs...)
			sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))

			entity, err := sched.queue.Pop(klog.FromContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			pgInfo, ok := entity.(*framework.QueuedPodGroupInfo)
			if !ok {
				t.Fatalf("popped %T, want the pod group", entity)
			}
			sched.scheduleOnePodGroup(ctx, pgInfo)
			sched.bindings.Wait()

			if diff := cmp.Diff(tt.wantBound, len(bindings(client))); diff != "" {
				t.Errorf("members bound (-want, +got):\n%s", diff)
			}
			bound := map[string]bool{}
			for _, b := range bindings(client) {
				bound[b[len("default/"):len("default/m-0")]] = true
			}
			var conditions []string
			for _, p := range members {
				if !bound[p.Name] {
					conditions = append(conditions, podScheduledCondition(t, ctx, client, p))
				}
			}
			if diff := cmp.Diff(tt.wantConditions, conditions); diff != "" {
				t.Errorf("PodScheduled conditions of the members not bound (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantGroup, podGroupCondition(t, client, "g")); diff != "" {
				t.Errorf("the PodGroup's condition (-want, +got):\n%s", diff)
			}
			// The simulation left nothing behind: the snapshot counts no
			// pod, the cache only the ones bound.
			var requested []int64
			for _, n := range sched.nodeInfoSnapshot.List() {
				requested = append(requested, n.GetRequested().GetMilliCPU())
			}
			if diff := cmp.Diff(make([]int64, tt.nodes), requested); diff != "" {
				t.Errorf("CPU requested on the snapshot's nodes after the cycle (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantBound, assumedPods(sched)); diff != "" {
				t.Errorf("assumed pods (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(0, len(sched.queue.InFlightPods())); diff != "" {
				t.Errorf("pods in flight (-want, +got):\n%s", diff)
			}
			// The members not bound are back, in their group's entity.
			var queued []string
			for _, p := range slices.Concat(sched.queue.PodsInActiveQ(), sched.queue.PodsInBackoffQ(), sched.queue.UnschedulablePods()) {
				queued = append(queued, p.Name)
			}
			slices.Sort(queued)
			if diff := cmp.Diff(len(tt.wantConditions), len(queued)); diff != "" {
				t.Errorf("members queued again: %v (-want, +got):\n%s", queued, diff)
			}
		})
	}
}

// podGroupCondition returns the PodGroup's PodGroupInitiallyScheduled
// condition as "Status Reason: Message", or "".
func podGroupCondition(t *testing.T, client *fake.Clientset, name string) string {
	t.Helper()
	pg, err := client.SchedulingV1beta1().PodGroups("default").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := apimeta.FindStatusCondition(pg.Status.Conditions, "PodGroupInitiallyScheduled")
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
}

// TestPodGroupMembersAreValidated: a group whose members disagree on their
// priority is not tried: every member fails with the reason, and so does
// the PodGroup's condition.
func TestPodGroupMembersAreValidated(t *testing.T) {
	ctx := testContext(t)
	a, b := makePod("a").group("g").obj(), makePod("b").group("g").priority(10).obj()
	client := fake.NewClientset(makeNode("node").obj(), makePodGroup("g", 2), a, b)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
	entity, err := sched.queue.Pop(klog.FromContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	sched.scheduleOnePodGroup(ctx, entity.(*framework.QueuedPodGroupInfo))
	want := "all pods in a single pod group should have the same priority as the pod group's priority, got 10 and 0"
	if diff := cmp.Diff([3]string{"False SchedulerError: " + want, "False SchedulerError: " + want, "False SchedulerError: " + want}, [3]string{podScheduledCondition(t, ctx, client, a), podScheduledCondition(t, ctx, client, b), podGroupCondition(t, client, "g")}); diff != "" {
		t.Errorf("conditions of a, b and the PodGroup (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), bindings(client)); diff != "" {
		t.Errorf("bindings (-want, +got):\n%s", diff)
	}
}
