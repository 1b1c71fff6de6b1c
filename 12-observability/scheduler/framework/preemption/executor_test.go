package preemption

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
)

// executorHandle serves the executor's client, informers and Activate.
type executorHandle struct {
	fwk.Handle
	client    *fake.Clientset
	factory   informers.SharedInformerFactory
	mu        sync.Mutex
	activated []string
	// activatedCh is closed by the first Activate.
	activatedCh chan struct{}
}

func (h *executorHandle) ClientSet() clientset.Interface                         { return h.client }
func (h *executorHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.factory }
func (h *executorHandle) NodeInfos() fwk.NodeInfoLister                          { return nil }
func (h *executorHandle) NominatedPodsForNode(string) []fwk.PodInfo              { return nil }
func (h *executorHandle) GetWaitingPod(types.UID) fwk.WaitingPod                 { return nil }

// Parallelizer runs the evictions one at a time (kube-scheduler's
// parallelism: 1), so that which victims start before a failure is the same
// in every run.
func (h *executorHandle) Parallelizer() fwk.Parallelizer { return parallelize.NewParallelizer(1) }
func (h *executorHandle) EventRecorder() events.EventRecorderLogger {
	return events.NewFakeRecorder(10)
}
func (h *executorHandle) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name := range pods {
		h.activated = append(h.activated, name)
	}
	if h.activatedCh != nil && len(h.activated) == len(pods) {
		close(h.activatedCh)
	}
}

// newStartedExecutor returns an Executor on client, with the handle's
// informers started and synced (the executor reads victims through them);
// they stop when the test ends.
func newStartedExecutor(t *testing.T, ctx context.Context, client *fake.Clientset, fts feature.Features) (*Executor, *executorHandle) {
	h := &executorHandle{client: client, factory: informers.NewSharedInformerFactory(client, 0), activatedCh: make(chan struct{})}
	e := NewExecutor(h, fts)
	ctx, cancel := context.WithCancel(ctx)
	h.factory.Start(ctx.Done())
	h.factory.WaitForCacheSync(ctx.Done())
	t.Cleanup(func() { cancel(); h.factory.Shutdown() })
	return e, h
}

// TestPrepareCandidateAsync: the preemptor counts as preempting from the
// call until its last victim's eviction is sent, not after; a failed
// eviction activates it.
func TestPrepareCandidateAsync(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "evictions succeed", true: "an eviction fails"}[fail], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			v1Pod := func(name string) *v1.Pod {
				return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}, Spec: v1.PodSpec{NodeName: "n"}}
			}
			victims := []*v1.Pod{v1Pod("v1"), v1Pod("v2")}
			client := fake.NewClientset(victims[0], victims[1])
			e, h := newStartedExecutor(t, ctx, client, feature.Features{EnableAsyncPreemption: true})

			release := make(chan struct{})
			var mu sync.Mutex
			var evicted []string
			// finished is closed once the goroutine has taken the preemptor
			// out of preempting (the fake's last call, for either case,
			// returns right before that).
			e.PreemptPod = func(ctx context.Context, c Candidate, preemptor, victim *v1.Pod, _ string) (bool, error) {
				// Every eviction waits until the test lets it go, so the
				// goroutine cannot be done before the test looks.
				<-release
				mu.Lock()
				evicted = append(evicted, victim.Name)
				mu.Unlock()
				if fail && victim.Name == "v1" {
					return false, errors.New("apiserver says no")
				}
				return false, nil
			}
			preemptor := v1Pod("preemptor")
			preemptor.Spec.NodeName = ""
			c := &candidate{name: "n", victims: &extenderv1.Victims{Pods: victims}}
			e.prepareCandidateAsync(ctx, c, preemptor, "DefaultPreemption")
			if !e.IsPodRunningPreemption(preemptor.UID) {
				t.Errorf("IsPodRunningPreemption right after the call = false, want true")
			}
			close(release)
			// Wait for the goroutine to end: it activates the preemptor
			// last when an eviction failed; otherwise it leaves preempting.
			// It takes microseconds; the deadline only bounds how long a
			// failing test waits.
			deadline := time.After(10 * time.Second)
			if fail {
				select {
				case <-h.activatedCh:
				case <-deadline:
					t.Fatal("the preemptor was not activated after the failed eviction")
				}
			}
			for {
				e.mu.RLock()
				done := !e.preempting.Has(preemptor.UID)
				e.mu.RUnlock()
				if done {
					break
				}
				select {
				case <-deadline:
					t.Fatal("the preemption goroutine did not end")
				case <-time.After(time.Millisecond):
				}
			}
			if e.IsPodRunningPreemption(preemptor.UID) {
				t.Errorf("IsPodRunningPreemption after the goroutine ended = true, want false")
			}
			mu.Lock()
			got := evicted
			mu.Unlock()
			// After a failure, the last victim is spared: the preemptor
			// comes back at once instead.
			want := []string{"v1", "v2"}
			wantActivated := []string(nil)
			if fail {
				want = []string{"v1"}
				wantActivated = []string{"preemptor"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("evicted (-want, +got):\n%s", diff)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if diff := cmp.Diff(wantActivated, h.activated); diff != "" {
				t.Errorf("activated (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestPreemptPod: the victim gets the DisruptionTarget condition, then is
// deleted; a victim gone already is no error.
func TestPreemptPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	victim := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "v", UID: "v"}, Spec: v1.PodSpec{NodeName: "n"}}
	client := fake.NewClientset(victim)
	h := &executorHandle{client: client, factory: informers.NewSharedInformerFactory(client, 0)}
	e := NewExecutor(h, feature.Features{})
	preemptor := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "p"}, Spec: v1.PodSpec{SchedulerName: "mini-scheduler"}}
	c := &candidate{name: "n", victims: &extenderv1.Victims{Pods: []*v1.Pod{victim}}}
	if _, err := e.PreemptPod(ctx, c, preemptor, victim, "DefaultPreemption"); err != nil {
		t.Fatal(err)
	}
	var verbs []string
	for _, a := range client.Actions() {
		verbs = append(verbs, a.GetVerb()+" "+a.GetSubresource())
	}
	if diff := cmp.Diff([]string{"patch status", "delete "}, verbs); diff != "" {
		t.Errorf("API calls (-want, +got):\n%s", diff)
	}
	if _, err := e.PreemptPod(ctx, c, preemptor, victim, "DefaultPreemption"); err != nil {
		t.Errorf("preempting a victim that is gone: %v, want no error", err)
	}
}

// TestEvictionsStopAtFirstError: the apiserver refuses the second of four
// victims' DisruptionTarget patch. The victims not yet started are left
// alone, and after a failure the last one is not evicted either; only the
// first is deleted, with or without asynchronous preemption. Upstream's
// executor (framework/preemption/executor.go) cancels the pieces not yet
// started at the first error (errCh.SendWithCancel), as this chapter's
// does; with parallelism 1, as here, it deletes exactly the victims before
// the failing one.
func TestEvictionsStopAtFirstError(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(map[bool]string{false: "within the cycle", true: "asynchronous"}[async], func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var victims []*v1.Pod
			var objs []runtime.Object
			for _, name := range []string{"v1", "v2", "v3", "v4"} {
				p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}, Spec: v1.PodSpec{NodeName: "n"}}
				victims = append(victims, p)
				objs = append(objs, p)
			}
			client := fake.NewClientset(objs...)
			client.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.(k8stesting.PatchAction).GetName() == "v2" {
					return true, nil, errors.New("apiserver says no")
				}
				return false, nil, nil
			})
			e, h := newStartedExecutor(t, ctx, client, feature.Features{EnableAsyncPreemption: async})
			preemptor := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "preemptor", UID: "preemptor"}}
			c := &candidate{name: "n", victims: &extenderv1.Victims{Pods: victims}}
			status := e.actuatePodPreemption(ctx, c, preemptor, "DefaultPreemption")
			if async {
				// The goroutine activates the preemptor last, after a
				// failure. The deadline only bounds how long a failing
				// test waits.
				select {
				case <-h.activatedCh:
				case <-time.After(10 * time.Second):
					t.Fatal("the preemptor was not activated after the failed eviction")
				}
			} else if status.IsSuccess() {
				t.Errorf("actuatePodPreemption = success, want the patch's error")
			}
			var deleted []string
			for _, a := range client.Actions() {
				if a.GetVerb() == "delete" {
					deleted = append(deleted, a.(k8stesting.DeleteAction).GetName())
				}
			}
			if diff := cmp.Diff([]string{"v1"}, deleted); diff != "" {
				t.Errorf("deleted victims (-want, +got):\n%s", diff)
			}
		})
	}
}
