package integration

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/legacyregistry"

	"minisched/06-scheduling-queue/scheduler"
	"minisched/06-scheduling-queue/scheduler/metrics"
)

// scheduleAttempts reads scheduler_schedule_attempts_total, all results
// summed, for the default profile. The tests of this package run one
// scheduler at a time, so the process-wide counter is that scheduler's.
func scheduleAttempts(t *testing.T) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "scheduler_schedule_attempts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "profile" && l.GetValue() == scheduler.DefaultSchedulerName {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// TestSchedulingQueue checks the queue against a real apiserver: a pod
// waits in the unschedulable pool through an event that no plugin which
// rejected it registered for, leaves it on one that could help it (and
// the log says which), and among pods that an event moves together, the
// one of higher priority goes first. The leftover flush is set to an hour,
// so that only events move pods.
func TestSchedulingQueue(t *testing.T) {
	metrics.Register()
	ctx, logs := newBufferedContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)
	const ns = "queue"
	createNamespace(ctx, t, admin, ns)
	createNodes(ctx, t, admin, "node-a", "node-b")
	counter := runScheduler(ctx, t, cfg, scheduler.WithPodMaxInUnschedulablePodsDuration(time.Hour))

	handled := func(event string) int {
		n := 0
		for _, kv := range logEntries(logs, "Cluster event handled") {
			if kv["event"] == event {
				n++
			}
		}
		return n
	}

	t.Run("an event no rejecting plugin registered for makes no attempt", func(t *testing.T) {
		// Only NodeResourcesFit rejects this pod; it registered node
		// additions and allocatable changes, not label changes.
		createPod(ctx, t, admin, requesting(pod(ns, "too-big", scheduler.DefaultSchedulerName), "64"))
		waitUnschedulable(ctx, t, admin, ns, "too-big", "")
		before, handledBefore := scheduleAttempts(t), handled("NodeUpdateNodeLabel")
		labelNode(ctx, t, admin, "node-a", "color", "blue")
		// NodeAffinity registered label changes, so the queue looks at the
		// event, and moves nothing.
		waitFor(ctx, t, "the scheduler to handle the label change", func() (bool, error) {
			return handled("NodeUpdateNodeLabel") > handledBefore, nil
		})
		if diff := cmp.Diff(before, scheduleAttempts(t)); diff != "" {
			t.Errorf("scheduler_schedule_attempts_total after the label change (-want, +got):\n%s", diff)
		}
		if diff := cmp.Diff(1, decisions(logs, ns+"/too-big")); diff != "" {
			t.Errorf("attempts of too-big (-want, +got):\n%s", diff)
		}
		if err := admin.CoreV1().Pods(ns).Delete(ctx, "too-big", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a label change that does not satisfy NodeAffinity: the pod is tried again", func(t *testing.T) {
		// NodeAffinity rejects this pod and registered node label changes,
		// so any label change moves it, whether or not it helps. (Chapter
		// 08's queueing hint tells the two apart.)
		createPod(ctx, t, admin, withSelector(pod(ns, "wants-ssd", scheduler.DefaultSchedulerName), "disk", "ssd"))
		waitUnschedulable(ctx, t, admin, ns, "wants-ssd", "")
		labelNode(ctx, t, admin, "node-b", "disk", "hdd")
		waitFor(ctx, t, "a second attempt of wants-ssd", func() (bool, error) { return decisions(logs, ns+"/wants-ssd") >= 2, nil })
		labelNode(ctx, t, admin, "node-b", "disk", "ssd")
		waitFor(ctx, t, "wants-ssd to be bound, and its decision logged", func() (bool, error) {
			return getPod(ctx, t, admin, ns, "wants-ssd").Spec.NodeName == "node-b" && scheduledDecision(logs, ns+"/wants-ssd"), nil
		})
		if diff := cmp.Diff(3, decisions(logs, ns+"/wants-ssd")); diff != "" {
			t.Errorf("attempts of wants-ssd: the first, one after each label change (-want, +got):\n%s", diff)
		}
	})

	t.Run("a node that fits is added: the NodeAdd event moves the pod", func(t *testing.T) {
		createPod(ctx, t, admin, withSelector(pod(ns, "waits", scheduler.DefaultSchedulerName), "pool", "new"))
		waitUnschedulable(ctx, t, admin, ns, "waits", "")
		if _, err := admin.CoreV1().Nodes().Create(ctx, withLabel(node("new"), "pool", "new"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(ctx, t, "waits to be bound", func() (bool, error) { return getPod(ctx, t, admin, ns, "waits").Spec.NodeName == "new", nil })
		var got []string
		for _, kv := range logEntries(logs, "Pod moved to an internal scheduling queue") {
			if kv["pod"] == ns+"/waits" {
				got = append(got, kv["event"]+" "+kv["queue"])
			}
		}
		want := []string{"UnscheduledPodAdd Active", "ScheduleAttemptFailure Unschedulable", "NodeAdd Active"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("queue moves of waits (-want, +got):\n%s", diff)
		}
	})

	t.Run("an event moves two pods: the higher priority gets the room", func(t *testing.T) {
		for name, value := range map[string]int32{"low": 10, "high": 1000} {
			createPriorityClass(ctx, t, admin, ns, name, value)
		}
		// The low-priority pod comes first, and both wait for a node of
		// their pool; the node has room for one of them.
		for _, name := range []string{"low", "high"} {
			p := withSelector(requesting(pod(ns, name, scheduler.DefaultSchedulerName), "3"), "pool", "prio")
			p.Spec.PriorityClassName = name
			createPod(ctx, t, admin, p)
			waitUnschedulable(ctx, t, admin, ns, name, "")
		}
		if _, err := admin.CoreV1().Nodes().Create(ctx, withLabel(node("prio"), "pool", "prio"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(ctx, t, "high to be bound and low to be tried again", func() (bool, error) {
			return getPod(ctx, t, admin, ns, "high").Spec.NodeName != "" && decisions(logs, ns+"/low") == 2, nil
		})
		if diff := cmp.Diff(map[string]string{"high": "prio", "low": ""}, map[string]string{"high": getPod(ctx, t, admin, ns, "high").Spec.NodeName, "low": getPod(ctx, t, admin, ns, "low").Spec.NodeName}); diff != "" {
			t.Errorf("placements (-want, +got):\n%s", diff)
		}
		counter.waitCounted(ctx, t, 2)
		if codes := counter.get()[ns+"/low"]; len(codes) != 0 {
			t.Errorf("low got Bindings: %v", codes)
		}
	})
}
