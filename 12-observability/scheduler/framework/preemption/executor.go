package preemption

// This file mirrors pkg/scheduler/framework/preemption/executor.go of
// k8s.io/kubernetes: the Executor, which evicts the chosen victims, either
// within the scheduling cycle (prepareCandidate) or in a goroutine of its
// own (prepareCandidateAsync, KEP-4832), and tells the queue whether a
// preemptor's preemption is still running (IsPodRunningPreemption).

import (
	"context"
	"fmt"
	"runtime/trace"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	clientset "k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	apipod "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

type pendingVictim struct {
	namespace string
	name      string
}

// Executor evicts victims for preemptors.
type Executor struct {
	mu sync.RWMutex
	fh Handle

	podLister corelisters.PodLister
	fts       feature.Features

	// preempting holds the preemptors whose asynchronous preemption is
	// running. PreEnqueue keeps them out of activeQ meanwhile: a second
	// cycle would find the victims still there and preempt again.
	preempting sets.Set[types.UID]
	// lastVictimsPendingPreemption holds, per preemptor, the last victim
	// being evicted. Once it is gone or terminating, the preemption is as
	// good as done, even if the goroutine has not yet taken the preemptor
	// out of preempting; see IsPodRunningPreemption.
	lastVictimsPendingPreemption map[types.UID]pendingVictim

	// PreemptPod evicts one victim. It returns true when the victim was
	// only waiting at Permit and was rejected in memory, without a delete
	// call. Tests may replace it.
	PreemptPod func(ctx context.Context, c Candidate, preemptor *v1.Pod, victim *v1.Pod, pluginName string) (bool, error)
}

// NewExecutor returns an Executor whose PreemptPod evicts victims through
// the apiserver.
func NewExecutor(fh Handle, fts feature.Features) *Executor {
	e := &Executor{
		fh:                           fh,
		podLister:                    fh.SharedInformerFactory().Core().V1().Pods().Lister(),
		preempting:                   sets.New[types.UID](),
		lastVictimsPendingPreemption: map[types.UID]pendingVictim{},
		fts:                          fts,
	}
	e.PreemptPod = e.preemptPod
	return e
}

// preemptPod evicts one victim. A victim waiting at Permit is simply
// rejected: it has no node yet, so there is nothing to delete. Any other
// victim first gets the DisruptionTarget condition, so that its owner (and
// kubectl describe) can tell it was preempted by the scheduler, then it is
// deleted, with its default grace period. A victim that is gone already
// is no error.
//
//workshop:part 09/5
func (e *Executor) preemptPod(ctx context.Context, c Candidate, preemptor *v1.Pod, victim *v1.Pod, pluginName string) (bool, error) {
	logger := klog.FromContext(ctx)
	if waitingPod := e.fh.GetWaitingPod(victim.UID); waitingPod != nil {
		if waitingPod.Preempt(pluginName, "preempted") {
			logger.V(2).Info("Preemptor preempted a waiting pod", "preemptorType", "pod", "preemptor", klog.KObj(preemptor), "waitingPod", klog.KObj(victim), "node", c.Name())
			e.fh.EventRecorder().WithLogger(logger).Eventf(victim, preemptor, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by pod %v on node %v (in kube-scheduler memory).", preemptor.UID, c.Name())
			return true, nil
		}
	}
	condition := &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: apipod.CalculatePodConditionObservedGeneration(&victim.Status, victim.Generation, v1.DisruptionTarget),
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", preemptor.Spec.SchedulerName),
	}
	newStatus := victim.Status.DeepCopy()
	if apipod.UpdatePodCondition(newStatus, condition) {
		if err := util.PatchPodStatus(ctx, e.fh.ClientSet(), victim.Name, victim.Namespace, &victim.Status, newStatus); err != nil {
			if !apierrors.IsNotFound(err) {
				logger.Error(err, "Could not add DisruptionTarget condition due to preemption", "preemptor", klog.KObj(preemptor), "victim", klog.KObj(victim))
				return false, err
			}
			logger.V(2).Info("Victim Pod is already deleted", "preemptor", klog.KObj(preemptor), "victim", klog.KObj(victim), "node", c.Name())
			return false, nil
		}
	}
	if err := e.fh.ClientSet().CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		if !apierrors.IsNotFound(err) {
			logger.Error(err, "Tried to preempted pod", "pod", klog.KObj(victim), "preemptor", klog.KObj(preemptor))
			return false, err
		}
		logger.V(2).Info("Victim Pod is already deleted", "preemptor", klog.KObj(preemptor), "victim", klog.KObj(victim), "node", c.Name())
		return false, nil
	}
	logger.V(2).Info("Preemptor Pod preempted victim Pod", "preemptor", klog.KObj(preemptor), "victim", klog.KObj(victim), "node", c.Name())
	e.fh.EventRecorder().WithLogger(logger).Eventf(victim, preemptor, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by pod %v on node %v", preemptor.UID, c.Name())
	return false, nil
}

// actuatePodPreemption evicts the candidate's victims for the preemptor:
// in the background when the SchedulerAsyncPreemption feature gate is on
// (upstream's default since v1.33), else before returning.
func (e *Executor) actuatePodPreemption(ctx context.Context, c Candidate, preemptor *v1.Pod, pluginName string) *fwk.Status {
	if e.fts.EnableAsyncPreemption {
		e.prepareCandidateAsync(ctx, c, preemptor, pluginName)
		return nil
	}
	return e.prepareCandidate(ctx, c, preemptor, pluginName)
}

// prepareCandidate evicts the victims within the scheduling cycle, on up
// to `parallelism` goroutines (the handle's Parallelizer), then clears the
// nominations of lower-priority pods on the node: they may no longer fit
// there, and without a nomination they are free to go elsewhere. The
// scheduling loop waits for every API call. The first error cancels the
// victims not yet started (errCh.SendWithCancel), as upstream's does: the
// preemptor will not come to this node this time.
//
//workshop:part 09/5
//workshop:part 10/3
func (e *Executor) prepareCandidate(ctx context.Context, c Candidate, preemptor *v1.Pod, pluginName string) (status *fwk.Status) {
	defer trace.StartRegion(ctx, "prepareCandidate").End()
	observeVictims(c)
	startTime := time.Now()
	defer func() {
		result := metrics.GoroutineResultSuccess
		if !status.IsSuccess() {
			result = metrics.GoroutineResultError
		}
		metrics.PreemptionExecutionDuration.WithLabelValues(preemptorType, result).Observe(metrics.SinceInSeconds(startTime))
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logger := klog.FromContext(ctx)
	errCh := parallelize.NewResultChannel[error]()
	e.fh.Parallelizer().Until(ctx, len(c.Victims().Pods), func(i int) {
		if trace.IsEnabled() {
			defer trace.StartRegion(ctx, "PreemptPod").End()
		}
		victim := c.Victims().Pods[i]
		if victim.DeletionTimestamp != nil {
			logger.V(2).Info("Victim Pod is already being deleted, skipping the API call for it", "preemptor", klog.KObj(preemptor), "node", c.Name(), "victim", klog.KObj(victim))
			return
		}
		if _, err := e.PreemptPod(ctx, c, preemptor, victim, pluginName); err != nil {
			errCh.SendWithCancel(err, cancel)
		}
	}, pluginName)
	if err := errCh.Receive(); err != nil {
		return fwk.AsStatus(err)
	}
	nominatedPods := getLowerPriorityNominatedPods(e.fh, corev1helpers.PodPriority(preemptor), c.Name())
	if err := clearNominatedNodeName(ctx, e.fh.ClientSet(), nominatedPods...); err != nil {
		logger.Error(err, "Cannot clear 'NominatedNodeName' field")
		// Not critical: the pods are nominated elsewhere or bound later.
	}
	return nil
}

// prepareCandidateAsync does prepareCandidate's work in a goroutine, so
// the scheduling loop goes on to the next pod at once (KEP-4832). Until
// the goroutine is done, the preemptor is in preempting: PreEnqueue holds
// it back, or it would find the victims still running and preempt again.
//
// The victims but the last are deleted in parallel, and the first error
// cancels the ones not yet started, the last one included; the last one
// goes alone, recorded in lastVictimsPendingPreemption first. Its deletion is the
// event that brings the preemptor back, and that event may arrive before
// the goroutine takes the preemptor out of preempting: PreEnqueue then
// sees the last victim terminating or gone and lets the preemptor through,
// rather than parking it for an event that already came.
//
// The goroutine's context is not the cycle's: it outlives the cycle. It
// keeps only the cycle context's values (cycleCtx): the logger, and the
// trace task of the preemptor's attempt, under which the goroutine's work
// shows as a task of its own. (Upstream starts from context.Background,
// and its goroutine logs with the global logger.) When an API call fails,
// or the last victim was only rejected at Permit (no deletion event will
// come), the preemptor is activated, so that it does not wait in the
// unschedulable pool for nothing.
//
//workshop:part 09/5
//workshop:part 10/3
func (e *Executor) prepareCandidateAsync(cycleCtx context.Context, c Candidate, preemptor *v1.Pod, pluginName string) {
	observeVictims(c)
	ctx, cancel := context.WithCancel(context.WithoutCancel(cycleCtx))
	logger := klog.FromContext(ctx)

	victimPods := make([]*v1.Pod, 0, len(c.Victims().Pods))
	for _, victim := range c.Victims().Pods {
		if victim.DeletionTimestamp != nil {
			logger.V(2).Info("Victim Pod is already being deleted, skipping the API call for it", "preemptor", klog.KObj(preemptor), "node", c.Name(), "victim", klog.KObj(victim))
			continue
		}
		victimPods = append(victimPods, victim)
	}
	if len(victimPods) == 0 {
		cancel()
		return
	}

	e.mu.Lock()
	e.preempting.Insert(preemptor.UID)
	e.mu.Unlock()

	// A task of its own, under the preemptor's attempt, while a trace is
	// recorded (trace.NewTask allocates even when none is).
	endTask := func() {}
	if trace.IsEnabled() {
		var task *trace.Task
		ctx, task = trace.NewTask(ctx, "asyncPreemption")
		endTask = task.End
	}
	go func() {
		defer endTask()
		defer trace.StartRegion(ctx, "asyncPreemption").End()
		defer cancel()
		startTime := time.Now()
		failed := false
		// The goroutine's duration and count, by its result, as upstream's:
		// success, or error if any API call failed.
		defer func() {
			result := metrics.GoroutineResultSuccess
			if failed {
				result = metrics.GoroutineResultError
			}
			metrics.PreemptionExecutionDuration.WithLabelValues(preemptorType, result).Observe(metrics.SinceInSeconds(startTime))
			metrics.PreemptionGoroutinesDuration.WithLabelValues(result).Observe(metrics.SinceInSeconds(startTime))
			metrics.PreemptionGoroutinesExecutionTotal.WithLabelValues(result).Inc()
		}()
		preemptedLastVictimInMemory := false
		logger.V(2).Info("Start the preemption asynchronously", "preemptor", klog.KObj(preemptor), "node", c.Name(), "numVictims", len(c.Victims().Pods), "numVictimsToDelete", len(victimPods))

		nominatedPods := getLowerPriorityNominatedPods(e.fh, corev1helpers.PodPriority(preemptor), c.Name())
		if err := clearNominatedNodeName(ctx, e.fh.ClientSet(), nominatedPods...); err != nil {
			logger.Error(err, "Cannot clear 'NominatedNodeName' field from lower priority pods on the same target node", "node", c.Name())
			failed = true
		}

		preemptLastVictim := true
		if len(victimPods) > 1 {
			errCh := parallelize.NewResultChannel[error]()
			e.fh.Parallelizer().Until(ctx, len(victimPods)-1, func(i int) {
				if trace.IsEnabled() {
					defer trace.StartRegion(ctx, "PreemptPod").End()
				}
				if _, err := e.PreemptPod(ctx, c, preemptor, victimPods[i], pluginName); err != nil {
					errCh.SendWithCancel(err, cancel)
				}
			}, pluginName)
			if err := errCh.Receive(); err != nil {
				logger.Error(err, "Error occurred during async preemption")
				failed = true
				preemptLastVictim = false
			}
		}
		if preemptLastVictim {
			lastVictim := victimPods[len(victimPods)-1]
			e.mu.Lock()
			e.lastVictimsPendingPreemption[preemptor.UID] = pendingVictim{namespace: lastVictim.Namespace, name: lastVictim.Name}
			e.mu.Unlock()
			region := trace.StartRegion(ctx, "PreemptPod")
			preemptedInMemory, err := e.PreemptPod(ctx, c, preemptor, lastVictim, pluginName)
			region.End()
			if err != nil {
				logger.Error(err, "Error occurred during async preemption of the last victim")
				failed = true
			} else if preemptedInMemory {
				preemptedLastVictimInMemory = true
			}
		}
		e.mu.Lock()
		e.preempting.Delete(preemptor.UID)
		delete(e.lastVictimsPendingPreemption, preemptor.UID)
		e.mu.Unlock()
		if failed || preemptedLastVictimInMemory {
			e.fh.Activate(logger, map[string]*v1.Pod{preemptor.Name: preemptor})
		}
		result := "success"
		if failed {
			result = "error"
		}
		logger.V(2).Info("Async Preemption finished completely", "preemptor", klog.KObj(preemptor), "node", c.Name(), "result", result)
	}()
}

// preemptorType is the "preemptor" label of the preemption metrics: this
// chapter's preemptors are single pods ("pod"); upstream's pod groups
// preempt too, with their own label, which this chapter leaves out.
const preemptorType = "pod"

// observeVictims records how many victims one preemption chose, and how
// many of them violate a PodDisruptionBudget by their eviction (the
// candidate's NumPDBViolations, a count of pods, not of budgets), as
// upstream's function of that name does for a pod's preemption.
//
//workshop:part 12/3
func observeVictims(c Candidate) {
	metrics.PreemptionVictims.Observe(float64(len(c.Victims().Pods)))
	if n := float64(c.Victims().NumPDBViolations); n > 0 {
		metrics.PreemptionPDBViolations.WithLabelValues(preemptorType).Add(n)
	}
}

// IsPodRunningPreemption says whether the pod's asynchronous preemption is
// still running. Once its last victim is gone or terminating, it is not,
// even if the goroutine has not returned yet.
func (e *Executor) IsPodRunningPreemption(podUID types.UID) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if !e.preempting.Has(podUID) {
		return false
	}
	victim, ok := e.lastVictimsPendingPreemption[podUID]
	if !ok {
		// The last victim's eviction has not started yet.
		return true
	}
	victimPod, err := e.podLister.Pods(victim.namespace).Get(victim.name)
	if err != nil {
		return false
	}
	return victimPod.DeletionTimestamp == nil
}

// clearNominatedNodeName patches each pod's status.nominatedNodeName to "".
func clearNominatedNodeName(ctx context.Context, cs clientset.Interface, pods ...*v1.Pod) utilerrors.Aggregate {
	var errs []error
	for _, p := range pods {
		if len(p.Status.NominatedNodeName) == 0 {
			continue
		}
		podStatusCopy := p.Status.DeepCopy()
		podStatusCopy.NominatedNodeName = ""
		if err := util.PatchPodStatus(ctx, cs, p.Name, p.Namespace, &p.Status, podStatusCopy); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// getLowerPriorityNominatedPods returns the pods nominated to the node with
// a priority below priority. Upstream does not check whether they would
// still fit next to the preemptor: there are seldom more than a few.
func getLowerPriorityNominatedPods(pn fwk.PodNominator, priority int32, nodeName string) []*v1.Pod {
	var lowerPriorityPods []*v1.Pod
	for _, pi := range pn.NominatedPodsForNode(nodeName) {
		if corev1helpers.PodPriority(pi.GetPod()) < priority {
			lowerPriorityPods = append(lowerPriorityPods, pi.GetPod())
		}
	}
	return lowerPriorityPods
}
