package scheduler

// This file does what pkg/scheduler/framework/runtime/waiting_pods_map.go of
// k8s.io/kubernetes does: it holds the pods that a Permit plugin asked to
// wait, and implements fwk.WaitingPod, through which plugins allow or reject
// them.

import (
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"
)

// waitingPods is the set of pods waiting at Permit, by UID.
type waitingPods struct {
	mu   sync.Mutex
	pods map[types.UID]*waitingPod
	// rejected holds the pods whose wait was rejected and whose binding
	// goroutine has read the verdict, until it has forgotten them in the
	// cache (forgotten): they are still assumed there meanwhile, and
	// permitAwarePodGroupManager must not count them.
	rejected sets.Set[types.UID]
	// permitMu orders the decisions about waiting pods: the framework holds
	// it while the Permit plugins run and while the Unreserve plugins run,
	// a deadline takes it before it rejects a pod, and so do WaitOnPermit
	// when the scheduler stops, the rejection of a deleted pod and a
	// preemption. So a gang's last member, which counts its gang's members
	// and then allows the waiting ones, cannot see one of them rejected in
	// between and bind the gang without it: GangScheduling counts the
	// assumed members, and the handle leaves out the ones already rejected
	// (permitAwarePodGroupManager). (Upstream's timers reject without such
	// a lock.)
	permitMu sync.Mutex
}

func newWaitingPods() *waitingPods {
	return &waitingPods{pods: map[types.UID]*waitingPod{}, rejected: sets.New[types.UID]()}
}

func (m *waitingPods) add(wp *waitingPod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pods[wp.pod.UID] = wp
}

// remove drops the pod once its binding goroutine has read the verdict. A
// rejected pod is still assumed in the cache until that goroutine forgets
// it, so it is remembered as rejected until then.
func (m *waitingPods) remove(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if wp := m.pods[uid]; wp != nil && wp.isRejected() {
		m.rejected.Insert(uid)
	}
	delete(m.pods, uid)
}

// forgotten says that the pod is no longer assumed in the cache.
func (m *waitingPods) forgotten(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rejected.Delete(uid)
}

// isRejected says whether the pod was rejected at Permit and is, or may
// still be, assumed in the cache.
func (m *waitingPods) isRejected(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if wp := m.pods[uid]; wp != nil {
		return wp.isRejected()
	}
	return m.rejected.Has(uid)
}

func (m *waitingPods) get(uid types.UID) *waitingPod {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pods[uid]
}

// list returns the pods still waiting: a pod already allowed or rejected
// stays in the map until its binding goroutine reads the verdict, but it
// waits no more. (Upstream iterates over the whole map.) Callers act on
// the pods after the map's lock is released, so a plugin may allow or
// reject pods from its callback.
func (m *waitingPods) list() []*waitingPod {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*waitingPod, 0, len(m.pods))
	for _, wp := range m.pods {
		if !wp.isDecided() {
			out = append(out, wp)
		}
	}
	return out
}

// waitingPod is one pod waiting at Permit. Every plugin that answered Wait
// must Allow it, each before its own deadline; one Reject, or one deadline
// passing, rejects it. The verdict is delivered once, on verdict.
type waitingPod struct {
	pod *v1.Pod
	// permitMu is the map's: Preempt takes it, as the other rejections do.
	permitMu sync.Locker
	mu       sync.Mutex
	pending  map[string]clock.Timer // plugin -> its deadline
	verdict  chan *fwk.Status       // buffered: deciding never blocks
	decided  bool
	// rejected says that the verdict was not Success.
	rejected bool
}

var _ fwk.WaitingPod = &waitingPod{}

// newWaitingPod starts one deadline per waiting plugin. A deadline rejects
// the pod with upstream's message, holding permitMu.
func newWaitingPod(pod *v1.Pod, waitTimes map[string]time.Duration, clk clock.WithDelayedExecution, permitMu sync.Locker) *waitingPod {
	wp := &waitingPod{pod: pod, permitMu: permitMu, pending: map[string]clock.Timer{}, verdict: make(chan *fwk.Status, 1)}
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for plugin, d := range waitTimes {
		wp.pending[plugin] = clk.AfterFunc(d, func() {
			// Rejecting stops the other timers; a clock may run this
			// callback while it holds its own lock, so reject from a
			// goroutine of its own.
			go func() {
				permitMu.Lock()
				defer permitMu.Unlock()
				wp.Reject(plugin, fmt.Sprintf("rejected due to timeout after waiting %v at plugin %v", d, plugin))
			}()
		})
	}
	return wp
}

// GetPod returns the waiting pod.
func (w *waitingPod) GetPod() *v1.Pod { return w.pod }

// GetPendingPlugins lists the plugins that have not allowed the pod yet.
func (w *waitingPod) GetPendingPlugins() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pending))
	for p := range w.pending {
		out = append(out, p)
	}
	return out
}

// isDecided says whether the pod was allowed or rejected already.
func (w *waitingPod) isDecided() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.decided
}

// isRejected says whether the pod was rejected (or preempted) already.
func (w *waitingPod) isRejected() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rejected
}

// Allow records one plugin's consent; the last one lets the pod go on.
func (w *waitingPod) Allow(pluginName string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.pending[pluginName]; ok {
		t.Stop()
		delete(w.pending, pluginName)
	}
	if len(w.pending) == 0 {
		w.decide(fwk.NewStatus(fwk.Success))
	}
}

// Reject makes the pod unschedulable; it reports whether this call decided.
func (w *waitingPod) Reject(pluginName, msg string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.decide(fwk.NewStatus(fwk.Unschedulable, msg).WithPlugin(pluginName))
}

// Preempt ends the wait without marking the pod unschedulable: preemption
// calls it for a waiting pod it evicts (framework/preemption's executor,
// from the scheduling cycle or from its goroutine). It takes permitMu, as
// a deadline does, so that a gang's Permit that counts the waiting members
// and then allows them does not allow one preempted in between. No plugin
// calls it while permitMu is held.
func (w *waitingPod) Preempt(pluginName, msg string) bool {
	w.permitMu.Lock()
	defer w.permitMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.decide(fwk.NewStatus(fwk.Error, msg).WithPlugin(pluginName))
}

// decide delivers the first verdict and stops every deadline. w.mu is held.
func (w *waitingPod) decide(s *fwk.Status) bool {
	if w.decided {
		return false
	}
	w.decided = true
	w.rejected = !s.IsSuccess()
	for _, t := range w.pending {
		t.Stop()
	}
	w.verdict <- s
	return true
}
