package scheduler

import (
	"context"
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
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// TestPodGroupSchedulingAlgorithm runs the simulation of a pod-group cycle
// alone, without acting on it: where each member would go, whether the
// group may be placed, and that the snapshot is as the cache left it
// afterwards, whatever the verdict.
func TestPodGroupSchedulingAlgorithm(t *testing.T) {
	tests := []struct {
		name  string
		nodes int // nodes of 1 CPU
		// members is how many members of 1 CPU the group has.
		members  int
		minCount int32
		// want lists each member's node, or its error, in the group's
		// order.
		want       []string
		wantStatus string
	}{
		{
			name: "room for all", nodes: 2, members: 2, minCount: 2,
			want: []string{"node", "node"}, wantStatus: "Success",
		},
		{
			name: "room for three of four", nodes: 3, members: 4, minCount: 4,
			want:       []string{"node", "node", "node", "0/3 nodes are available: 3 Insufficient cpu."},
			wantStatus: "Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
		},
		{
			name: "the loop stops once minCount is out of reach", nodes: 1, members: 4, minCount: 4,
			want: []string{"node", "0/1 nodes are available: 1 Insufficient cpu.",
				"minCount (4) cannot be satisfied: 1 scheduled, 2 remaining", "minCount (4) cannot be satisfied: 1 scheduled, 2 remaining"},
			wantStatus: "Unschedulable: minCount (4) cannot be satisfied: 1 scheduled, 2 remaining",
		},
		{
			name: "minCount three of four", nodes: 3, members: 4, minCount: 3,
			want:       []string{"node", "node", "node", "0/3 nodes are available: 3 Insufficient cpu."},
			wantStatus: "Success",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			objs := []runtime.Object{makePodGroup("g", tt.minCount)}
			for i := range tt.nodes {
				objs = append(objs, makeNode(fmt.Sprintf("node-%d", i)).cpu("1").obj())
			}
			for i := range tt.members {
				objs = append(objs, makePod(fmt.Sprintf("m-%d", i)).group("g").req("1").obj())
			}
			sched := newTestScheduler(t, ctx, fake.NewClientset(objs...), events.NewFakeRecorder(100))
			entity, err := sched.queue.Pop(klog.FromContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			pgInfo := entity.(*framework.QueuedPodGroupInfo)
			if err := sched.cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot); err != nil {
				t.Fatal(err)
			}
			if err := sched.reconcilePodGroupWithSnapshot(pgInfo.PodGroupInfo); err != nil {
				t.Fatal(err)
			}
			result := sched.runSchedulingAlgorithm(ctx, framework.NewCycleState(), pgInfo)
			var got []string
			for _, r := range result.podResults {
				if r.err != nil {
					got = append(got, r.err.Error())
					continue
				}
				// The node's name, without its number: which of the equal
				// nodes a member gets is not the point.
				got = append(got, r.result.SuggestedHost[:len("node")])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("members' results (-want, +got):\n%s", diff)
			}
			status := result.status.Code().String()
			if msg := result.status.Message(); msg != "" {
				status += ": " + msg
			}
			if diff := cmp.Diff(tt.wantStatus, status); diff != "" {
				t.Errorf("the group's status (-want, +got):\n%s", diff)
			}
			var requested []int64
			for _, n := range sched.nodeInfoSnapshot.List() {
				requested = append(requested, n.GetRequested().GetMilliCPU())
			}
			if diff := cmp.Diff(make([]int64, tt.nodes), requested); diff != "" {
				t.Errorf("CPU requested on the snapshot's nodes after the simulation (-want, +got):\n%s", diff)
			}
			pgs, err := sched.nodeInfoSnapshot.PodGroupStates().Get("default", "g")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(0, pgs.ScheduledPodsCount()); diff != "" {
				t.Errorf("members the snapshot's group state counts as scheduled (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(0, assumedPods(sched)); diff != "" {
				t.Errorf("pods assumed in the cache by the simulation (-want, +got):\n%s", diff)
			}
		})
	}
}

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
		// wantResult is the result the group's attempt counts as, in
		// podgroup_schedule_attempts_total.
		wantResult string
	}{
		{
			name: "a gang of four with room for three binds none", nodes: 3, members: 4, group: makePodGroup("g", 4),
			wantConditions: []string{
				"False Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
				"False Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
				"False Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
				insufficient,
			},
			wantGroup:  "False Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining",
			wantResult: metrics.UnschedulableResult,
		},
		{
			name: "a gang of four with room for four binds all", nodes: 4, members: 4, group: makePodGroup("g", 4),
			wantBound: 4, wantGroup: "True Scheduled: ", wantResult: metrics.ScheduledResult,
		},
		{
			name: "minCount three of four with room for three binds three", nodes: 3, members: 4, group: makePodGroup("g", 3),
			wantBound: 3, wantConditions: []string{insufficient}, wantGroup: "True Scheduled: ", wantResult: metrics.ScheduledResult,
		},
		{
			name: "no node at all: the group is unschedulable, not an error", nodes: 0, members: 2, group: makePodGroup("g", 2),
			wantConditions: []string{
				"False Unschedulable: no nodes available to schedule pods",
				"False Unschedulable: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
			},
			wantGroup:  "False Unschedulable: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
			wantResult: metrics.UnschedulableResult,
		},
		{
			name: "a basic group binds what fits", nodes: 1, members: 2,
			group:     &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "g"}, Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}}},
			wantBound: 1, wantConditions: []string{"False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."}, wantGroup: "True Scheduled: ", wantResult: metrics.ScheduledResult,
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
			groupMetrics := func() map[string]uint64 {
				out := map[string]uint64{}
				for _, r := range []string{metrics.ScheduledResult, metrics.UnschedulableResult, metrics.ErrorResult} {
					labels := map[string]string{"result": r, "profile": DefaultSchedulerName}
					out["attempts "+r] = uint64(counterValue(t, "scheduler_podgroup_schedule_attempts_total", labels))
					out["durations "+r] = sampleCount(t, "scheduler_podgroup_scheduling_attempt_duration_seconds", labels)
				}
				out["algorithm"] = sampleCount(t, "scheduler_podgroup_scheduling_algorithm_duration_seconds", nil)
				return out
			}
			before := groupMetrics()
			sched.scheduleOnePodGroup(ctx, pgInfo)
			sched.bindings.Wait()

			grew := map[string]uint64{}
			for k, v := range groupMetrics() {
				if d := v - before[k]; d != 0 {
					grew[k] = d
				}
			}
			if diff := cmp.Diff(map[string]uint64{"attempts " + tt.wantResult: 1, "durations " + tt.wantResult: 1, "algorithm": 1}, grew); diff != "" {
				t.Errorf("pod-group metrics that grew (-want, +got):\n%s", diff)
			}

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
			var requested int64
			for _, n := range sched.nodeInfoSnapshot.List() {
				requested += n.GetRequested().GetMilliCPU()
			}
			if diff := cmp.Diff(int64(0), requested); diff != "" {
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

// TestPermitDoesNotCountRejectedMembers: a gang member rejected at Permit
// (a deadline passed, or it was deleted) stays assumed in the cache until
// its binding goroutine forgets it. A member whose Permit runs in between
// must not count it towards minCount: it would allow the rest of the gang
// to bind without it.
func TestPermitDoesNotCountRejectedMembers(t *testing.T) {
	for _, tc := range []struct {
		name string
		// after runs on the rejected first member before the second one's
		// Permit: the steps its binding goroutine takes.
		after func(t *testing.T, ctx context.Context, sched *Scheduler, assumed *v1.Pod)
	}{
		{name: "rejected, the verdict not read yet", after: func(*testing.T, context.Context, *Scheduler, *v1.Pod) {}},
		{name: "the verdict read, not forgotten yet", after: func(t *testing.T, ctx context.Context, sched *Scheduler, assumed *v1.Pod) {
			if s := sched.framework.WaitOnPermit(ctx, assumed); s.IsSuccess() {
				t.Fatal("WaitOnPermit allowed the rejected member")
			}
		}},
		{name: "forgotten", after: func(t *testing.T, ctx context.Context, sched *Scheduler, assumed *v1.Pod) {
			sched.framework.WaitOnPermit(ctx, assumed)
			sched.unreserveAndForget(ctx, framework.NewCycleState(), assumed)
			if sched.framework.waitingPods.isRejected(assumed.UID) {
				t.Error("a forgotten member is still remembered as rejected")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			a, b := makePod("a").group("g").obj(), makePod("b").group("g").obj()
			client := fake.NewClientset(makeNode("node").obj(), makePodGroup("g", 2), a, b)
			sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(100))
			// GangScheduling's Permit reads the PodGroup from the snapshot.
			if err := sched.cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot); err != nil {
				t.Fatal(err)
			}
			prepare := func(pod *v1.Pod) *v1.Pod {
				t.Helper()
				assumed, err := sched.prepareForBindingCycle(ctx, framework.NewCycleState(), pod, ScheduleResult{SuggestedHost: "node"})
				if err != nil {
					t.Fatal(err)
				}
				return assumed
			}
			assumedA := prepare(a)
			waitingA := sched.framework.waitingPods.get(a.UID)
			if waitingA == nil {
				t.Fatal("the first member does not wait at Permit")
			}
			sched.framework.RejectWaitingPod(a.UID)
			tc.after(t, ctx, sched, assumedA)
			assumedB := prepare(b)
			waitingB := sched.framework.waitingPods.get(b.UID)
			if diff := cmp.Diff([2]bool{true, false}, [2]bool{waitingB != nil, waitingB != nil && waitingB.isDecided()}); diff != "" {
				t.Errorf("whether the second member waits, and whether it was allowed (-want, +got):\n%s", diff)
			}
			sched.framework.RejectWaitingPod(b.UID)
			for _, p := range []*v1.Pod{assumedA, assumedB} {
				sched.framework.waitingPods.remove(p.UID)
				_ = sched.cache.ForgetPod(klog.FromContext(ctx), p)
			}
		})
	}
}

// TestSimulationKeepsNominations: a member assumed in the simulation is no
// longer nominated (the members after it would count it twice: on its
// nominated node and where the simulation put it), and undoing the
// simulation nominates it again, as upstream's unreserveAndForget does.
func TestSimulationKeepsNominations(t *testing.T) {
	ctx := testContext(t)
	member := makePod("m").group("g").req("1").obj()
	member.Status.NominatedNodeName = "nominated"
	client := fake.NewClientset(makeNode("nominated").cpu("2").obj(), makeNode("other").cpu("2").obj(), makePodGroup("g", 1), member)
	sched := newTestScheduler(t, ctx, client, events.NewFakeRecorder(10))
	sched.queue.AddNominatedPod(klog.FromContext(ctx), mustPodInfo(t, member), &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: "nominated"})
	if err := sched.cache.UpdateSnapshot(klog.FromContext(ctx), sched.nodeInfoSnapshot); err != nil {
		t.Fatal(err)
	}
	nominated := func() []string {
		var out []string
		for _, pi := range sched.queue.NominatedPodsForNode("nominated") {
			out = append(out, pi.GetPod().Name+" on "+pi.GetPod().Spec.NodeName)
		}
		return out
	}
	revert, err := sched.assumeAndReserveWithRevert(ctx, framework.NewCycleState(), member, "other")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), nominated()); diff != "" {
		t.Errorf("nominated to node nominated while assumed in the simulation (-want, +got):\n%s", diff)
	}
	revert()
	if diff := cmp.Diff([]string{"m on "}, nominated()); diff != "" {
		t.Errorf("nominated to node nominated after the simulation was undone (-want, +got):\n%s", diff)
	}
}
