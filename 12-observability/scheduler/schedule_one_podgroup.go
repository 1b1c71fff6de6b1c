package scheduler

// This file mirrors pkg/scheduler/schedule_one_podgroup.go of
// k8s.io/kubernetes (KEP-4671): scheduleOnePodGroup,
// reconcilePodGroupWithSnapshot, handlePodGroupFailureBeforeScheduling,
// validatePodGroup, skipPodGroupPodSchedule, podGroupCycle,
// podGroupSchedulingDefaultAlgorithm, podGroupPodSchedulingAlgorithm,
// assumeAndReserveWithRevert, completePodGroupAlgorithmResult,
// submitPodGroupAlgorithmResult and updatePodGroupCondition. It leaves out
// what v1.37.1 has behind other feature gates (composite pod groups,
// placements for topology-aware scheduling) and the PodGroupPostFilter
// extension point: v1.37.1 runs pod-group preemption with GenericWorkload
// alone (RunPodGroupPostFilterPlugins), and this chapter does not have it.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/trace"
	"time"

	v1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedulingapi "k8s.io/kubernetes/pkg/apis/scheduling"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// errPodGroupUnschedulable marks a failure of the whole group, as
// upstream's error of the same name: a member that fitted is not bound
// because too few others did.
var errPodGroupUnschedulable = errors.New("pod group is unschedulable")

// podGroupUnschedulableError is the error a member gets when its group
// could not be placed: its message is the group's.
type podGroupUnschedulableError struct{ msg string }

func (e *podGroupUnschedulableError) Error() string { return e.msg }

func (e *podGroupUnschedulableError) Unwrap() error { return errPodGroupUnschedulable }

// revertFns undo, the last first, what a pod-group cycle did in its
// simulation: each member's assume in the snapshot and its Reserve.
type revertFns []func()

// revert runs the functions in the reverse order of their registration,
// as deferred calls run, and forgets them: a later member may depend on
// an earlier one, never the other way round.
func (r *revertFns) revert() {
	for i := len(*r) - 1; i >= 0; i-- {
		(*r)[i]()
	}
	*r = nil
}

// scheduleOnePodGroup does the whole scheduling workflow for one pod group:
// one snapshot, then one pod-group cycle for all its queued members.
//
// Each member goes through Filter and Score on the snapshot as it stands
// after the members before it, and is assumed there, in the snapshot only.
// The group's members are placed if at least minCount of them fit
// (GangScheduling's PlacementFeasible); otherwise nothing is kept. Either
// way the simulation is undone; then the members that are to be placed are
// assumed in the cache, one by one, and go through Reserve and Permit
// (where GangScheduling makes them wait until minCount are assumed, which
// happens within this cycle) to their binding cycles.
//
//workshop:part 11/2
func (sched *Scheduler) scheduleOnePodGroup(ctx context.Context, pgInfo *framework.QueuedPodGroupInfo) {
	// The group's own lines name it; its members' lines name the pod
	// first, then the group (memberContext), as the scripts read them.
	logger := klog.FromContext(ctx)
	// One trace task per group attempt; each member tried in it gets a
	// task of its own under it (podGroupPodSchedulingAlgorithm).
	ctx, endTask := startTask(ctx, "podGroupAttempt")
	defer endTask()
	if trace.IsEnabled() {
		traceLog(ctx, "podGroup", pgInfo.Namespace+"/"+pgInfo.Name)
	}
	// start is when the group's attempt began, as upstream's: the group's
	// metrics are measured from it.
	start := time.Now()
	if err := sched.cache.UpdateSnapshot(logger, sched.nodeInfoSnapshot); err != nil {
		sched.handlePodGroupFailureBeforeScheduling(ctx, pgInfo, err)
		return
	}
	// The entity may carry an older PodGroup than the snapshot: the whole
	// cycle uses the snapshot's.
	if err := sched.reconcilePodGroupWithSnapshot(pgInfo.PodGroupInfo); err != nil {
		// No condition is written on a PodGroup the scheduler cannot see.
		pgInfo.PodGroup = nil
		sched.handlePodGroupFailureBeforeScheduling(ctx, pgInfo, err)
		return
	}
	if err := sched.validatePodGroup(pgInfo); err != nil {
		sched.handlePodGroupFailureBeforeScheduling(ctx, pgInfo, err)
		return
	}
	sched.skipPodGroupPodSchedule(ctx, pgInfo)
	if !pgInfo.HasQueuedPodInfos() {
		// Members that arrived while the others were skipped must not be
		// left pending.
		if err := sched.queue.AddAttemptedPodGroupIfNeeded(logger, pgInfo, sched.queue.SchedulingCycle(), fwk.NewStatus(fwk.Success)); err != nil {
			logger.Error(err, "Failed to finish skipped pod group scheduling attempt", "podGroup", klog.KObj(pgInfo))
		}
		return
	}
	logger.V(3).Info("Attempting to schedule pod group", "podGroup", klog.KObj(pgInfo), "pods", pgInfo.Size(), "attempt", pgInfo.Attempts)
	sched.podGroupCycle(ctx, framework.NewCycleState(), pgInfo, start)
}

// memberContext returns ctx with a logger for one member: its lines name
// the pod, then its group.
func memberContext(ctx context.Context, pod *v1.Pod, pgInfo *framework.QueuedPodGroupInfo) context.Context {
	return klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KObj(pod), "podGroup", klog.KObj(pgInfo)))
}

// reconcilePodGroupWithSnapshot replaces the entity's PodGroup with the
// snapshot's version, or fails if the snapshot has none (it was deleted).
func (sched *Scheduler) reconcilePodGroupWithSnapshot(pgi *framework.PodGroupInfo) error {
	pg, err := sched.nodeInfoSnapshot.PodGroups().Get(pgi.Namespace, pgi.Name)
	if err != nil {
		return err
	}
	pgi.PodGroup = pg
	return nil
}

// handlePodGroupFailureBeforeScheduling fails every member with err, sets
// the PodGroup's condition, and queues the group again. No pod-group
// metric counts it, as upstream's: the group was never tried. Each
// member's attempt starts and ends here (time.Now(), as upstream's
// function of that name passes): the group's own preparation was not its
// attempt.
func (sched *Scheduler) handlePodGroupFailureBeforeScheduling(ctx context.Context, pgInfo *framework.QueuedPodGroupInfo, err error) {
	logger := klog.FromContext(ctx)
	pgInfo.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		sched.handleSchedulingFailure(memberContext(ctx, pInfo.Pod, pgInfo), pInfo, err, clearNominatedNode, time.Now())
		return true
	})
	if pgInfo.PodGroup != nil {
		sched.updatePodGroupCondition(ctx, pgInfo.PodGroupInfo, &metav1.Condition{
			Type:    schedulingapi.PodGroupInitiallyScheduled,
			Status:  metav1.ConditionFalse,
			Reason:  schedulingapi.PodGroupReasonSchedulerError,
			Message: err.Error(),
		})
	}
	if err := sched.queue.AddAttemptedPodGroupIfNeeded(logger, pgInfo, sched.queue.SchedulingCycle(), fwk.AsStatus(err)); err != nil {
		logger.Error(err, "Failed to add pod group back to scheduling queue", "podGroup", klog.KObj(pgInfo))
	}
}

// validatePodGroup checks what makes a group one unit, as upstream's
// does: every member, queued or already placed, names this scheduler, and
// has the group's priority and the same preemption policy. (Upstream
// checks that the scheduler name is one of its profiles'; this scheduler
// has one.)
func (sched *Scheduler) validatePodGroup(pgInfo *framework.QueuedPodGroupInfo) error {
	priority := pgInfo.GetPriority()
	var policy v1.PreemptionPolicy
	validatePod := func(pod *v1.Pod) error {
		if pod.Spec.SchedulerName != sched.schedulerName {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", pod.Spec.SchedulerName, sched.schedulerName)
		}
		if p := corev1helpers.PodPriority(pod); p != priority {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", p, priority)
		}
		p := v1.PreemptLowerPriority
		if pod.Spec.PreemptionPolicy != nil {
			p = *pod.Spec.PreemptionPolicy
		}
		if policy == "" {
			policy = p
		} else if p != policy {
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy, got %v and %v", p, policy)
		}
		return nil
	}
	var err error
	pgInfo.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		err = validatePod(pInfo.Pod)
		return err == nil
	})
	if err != nil {
		return err
	}
	state, err := sched.nodeInfoSnapshot.PodGroupStates().Get(pgInfo.Namespace, pgInfo.Name)
	if err != nil {
		return fmt.Errorf("failed to get pod group state: %w", err)
	}
	for _, pod := range state.ScheduledPods() {
		if err := validatePod(pod); err != nil {
			return err
		}
	}
	return nil
}

// skipPodGroupPodSchedule takes out of the group the members that must not
// be scheduled (skipPodSchedule): they are Done, and not queued again.
func (sched *Scheduler) skipPodGroupPodSchedule(ctx context.Context, pgInfo *framework.QueuedPodGroupInfo) {
	logger := klog.FromContext(ctx)
	var skipped []*v1.Pod
	pgInfo.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
		if reason := sched.skipPodSchedule(pInfo.Pod); reason != "" {
			logger.V(4).Info("Skipping pod", "pod", klog.KObj(pInfo.Pod), "podGroup", klog.KObj(pgInfo), "reason", reason)
			skipped = append(skipped, pInfo.Pod)
		}
		return true
	})
	for _, pod := range skipped {
		pgInfo.RemovePod(pod)
		sched.queue.Done(logger, pod.UID)
	}
}

// algorithmResult is what the simulation decided for one member.
type algorithmResult struct {
	podInfo *framework.QueuedPodInfo
	result  ScheduleResult
	// state is the member's CycleState, which its binding cycle goes on
	// with.
	state          *framework.CycleState
	podsToActivate *framework.PodsToActivate
	// err is nil if the member fits, a FitError if it fits nowhere, or
	// another error.
	err error
	// ctx is the member's: its logger names the member, and it carries
	// the member's trace task, which endTask ends when the member's
	// attempt does (after its binding cycle, or at its failure).
	ctx     context.Context
	endTask func()
	// schedulingDuration is how long the member's own algorithm took: its
	// attempt's metrics count that, not the whole group's cycle, as
	// upstream's.
	schedulingDuration time.Duration
}

// podGroupAlgorithmResult is what the simulation decided for the group.
type podGroupAlgorithmResult struct {
	// podResults has one result per queued member, in the group's order.
	podResults []algorithmResult
	// status is Success if the members that fit may be bound, Unschedulable
	// if none may, Error if the cycle failed.
	status *fwk.Status
	// anyScheduled says whether any member fitted.
	anyScheduled bool
}

// podGroupCycle runs the simulation and acts on its result. The snapshot
// must be up to date.
func (sched *Scheduler) podGroupCycle(ctx context.Context, podGroupCycleState *framework.CycleState, pgInfo *framework.QueuedPodGroupInfo, start time.Time) {
	region := trace.StartRegion(ctx, "podGroupCycle")
	result := sched.runSchedulingAlgorithm(ctx, podGroupCycleState, pgInfo)
	metrics.PodGroupSchedulingAlgorithmLatency.Observe(metrics.SinceInSeconds(start))
	region.End()
	sched.submitPodGroupAlgorithmResult(ctx, pgInfo, result, start)
}

// runSchedulingAlgorithm runs the default algorithm and undoes the
// simulation before it returns, whatever it decided: the snapshot is as
// the cache left it. (Upstream's runRootSchedulingAlgorithm.)
func (sched *Scheduler) runSchedulingAlgorithm(ctx context.Context, podGroupCycleState *framework.CycleState, pgInfo *framework.QueuedPodGroupInfo) *podGroupAlgorithmResult {
	result, reverts := sched.podGroupSchedulingDefaultAlgorithm(ctx, podGroupCycleState, pgInfo)
	reverts.revert()
	if result.status.IsSuccess() && !result.anyScheduled {
		// Success needs at least one member placed.
		result.status = fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable)
	}
	return completePodGroupAlgorithmResult(ctx, pgInfo, result)
}

// podGroupSchedulingDefaultAlgorithm tries the members one after the
// other, in the group's order, each on the snapshot as the members before
// it left it. After each, GangScheduling's PlacementFeasible says whether
// the group can still reach minCount: Wait while it might, Unschedulable
// once it cannot (the loop stops there: the remaining members cannot
// help), Success once it has. It returns the results and the functions
// that undo the simulation; on anything but Success it has undone it
// already.
//
//workshop:part 11/2
func (sched *Scheduler) podGroupSchedulingDefaultAlgorithm(ctx context.Context, podGroupCycleState *framework.CycleState, pgInfo *framework.QueuedPodGroupInfo) (result *podGroupAlgorithmResult, reverts revertFns) {
	defer func() {
		if !result.status.IsSuccess() {
			reverts.revert()
			result.anyScheduled = false
		}
	}()
	queued := pgInfo.QueuedPodInfos[fwk.PodGroupKey(pgInfo.Namespace, pgInfo.Name)]
	result = &podGroupAlgorithmResult{status: fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable)}
	state, err := sched.nodeInfoSnapshot.PodGroupStates().Get(pgInfo.Namespace, pgInfo.Name)
	if err != nil {
		result.status = fwk.AsStatus(fmt.Errorf("failed to get podGroup state for podGroup %s to compute gang feasibility: %w", klog.KObj(pgInfo), err))
		return result, nil
	}
	// Members already assumed or bound count towards minCount.
	progress := framework.PlacementProgress{Remaining: len(queued), Scheduled: state.ScheduledPodsCount()}
	status := sched.framework.RunPlacementFeasiblePlugins(ctx, podGroupCycleState, pgInfo.PodGroupInfo, progress)
	if status.IsError() {
		result.status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", status.AsError()))
		return result, nil
	}
	if status.Code() == fwk.Unschedulable {
		result.status = fwk.NewStatus(fwk.Unschedulable, status.Reasons()...).WithError(errPodGroupUnschedulable)
		return result, nil
	}
	result.status = status
	for _, pInfo := range queued {
		podResult, revert := sched.podGroupPodSchedulingAlgorithm(ctx, podGroupCycleState, pgInfo, pInfo)
		result.podResults = append(result.podResults, podResult)
		if revert != nil {
			reverts = append(reverts, revert)
		}
		if podResult.err != nil && !isRejection(podResult.err) {
			result.status = fwk.AsStatus(fmt.Errorf("failed to schedule other pod from a pod group: %w", podResult.err))
			break
		}
		progress.Remaining--
		if podResult.err == nil {
			progress.Scheduled++
			result.anyScheduled = true
		}
		status := sched.framework.RunPlacementFeasiblePlugins(ctx, podGroupCycleState, pgInfo.PodGroupInfo, progress)
		if status.IsError() {
			result.status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", status.AsError()))
			break
		}
		result.status = status
		if status.Code() == fwk.Unschedulable {
			break
		}
	}
	if result.status.IsWait() {
		result.status = fwk.NewStatus(fwk.Unschedulable, result.status.Reasons()...).WithError(errPodGroupUnschedulable)
	}
	return result, reverts
}

// podGroupPodSchedulingAlgorithm finds a node for one member, as a single
// pod's scheduling algorithm does but without PostFilter (no preemption
// for a member), and assumes it there in the snapshot. It returns the
// member's result and the function that undoes the assume, or nil if the
// member does not fit.
func (sched *Scheduler) podGroupPodSchedulingAlgorithm(ctx context.Context, podGroupCycleState *framework.CycleState, pgInfo *framework.QueuedPodGroupInfo, pInfo *framework.QueuedPodInfo) (algorithmResult, func()) {
	ctx = memberContext(ctx, pInfo.Pod, pgInfo)
	ctx, endTask := startTask(ctx, "schedulingAttempt")
	if trace.IsEnabled() {
		traceLog(ctx, "pod", pInfo.Pod.Namespace+"/"+pInfo.Pod.Name)
	}
	defer trace.StartRegion(ctx, "podGroupPodSchedulingAlgorithm").End()
	logger := klog.FromContext(ctx)
	start := time.Now()
	state := framework.NewCycleState()
	// Each member's cycle is sampled on its own, as a single pod's is.
	state.SetRecordPluginMetrics(rand.IntN(100) < pluginMetricsSamplePercent)
	podsToActivate := framework.NewPodsToActivate()
	state.Write(framework.PodsToActivateKey, podsToActivate)
	// This marks the cycle as a pod-group cycle: schedulingAlgorithm skips
	// PostFilter, and plugins can tell.
	state.SetPodGroupSchedulingCycle(podGroupCycleState)
	logger.V(4).Info("Attempting to schedule a pod belonging to a pod group", "attempt", pInfo.Attempts)
	podResult := algorithmResult{podInfo: pInfo, state: state, podsToActivate: podsToActivate, ctx: ctx, endTask: endTask}
	podResult.result, podResult.err = sched.schedulingAlgorithm(ctx, state, pInfo.Pod, start)
	if podResult.err != nil {
		podResult.schedulingDuration = time.Since(start)
		return podResult, nil
	}
	revert, err := sched.assumeAndReserveWithRevert(ctx, state, pInfo.Pod, podResult.result.SuggestedHost)
	podResult.schedulingDuration = time.Since(start)
	if err != nil {
		podResult.result, podResult.err = ScheduleResult{nominatingInfo: clearNominatedNode}, err
		return podResult, nil
	}
	return podResult, revert
}

// assumeAndReserveWithRevert assumes the member on host in the snapshot
// (not the cache) and runs Reserve, and returns the function that undoes
// both. Like a single pod's assume, it drops the member's nomination, so
// that the members after it do not count the member twice (on its
// nominated node and on host); the undo puts the nomination back, as
// upstream's unreserveAndForget does in a pod-group cycle.
//
//workshop:part 11/2
func (sched *Scheduler) assumeAndReserveWithRevert(ctx context.Context, state fwk.CycleState, pod *v1.Pod, host string) (func(), error) {
	logger := klog.FromContext(ctx)
	assumedPod := pod.DeepCopy()
	assumedPod.Spec.NodeName = host
	podInfo, err := framework.NewPodInfo(assumedPod)
	if err != nil {
		return nil, err
	}
	if err := sched.nodeInfoSnapshot.AssumePod(podInfo); err != nil {
		return nil, err
	}
	sched.queue.DeleteNominatedPodIfExists(assumedPod)
	forget := func() {
		if err := sched.nodeInfoSnapshot.ForgetPod(logger, assumedPod); err != nil {
			logger.Error(err, "Snapshot ForgetPod failed")
		}
		if nnn := pod.Status.NominatedNodeName; nnn != "" {
			// The nominator keeps the pod as it was, not on host.
			if pi, err := framework.NewPodInfo(pod); err == nil {
				sched.queue.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatedNodeName: nnn, NominatingMode: fwk.ModeOverride})
			}
		}
	}
	if status := sched.framework.RunReservePluginsReserve(ctx, state, assumedPod, host); !status.IsSuccess() {
		sched.framework.RunReservePluginsUnreserve(ctx, state, assumedPod, host)
		forget()
		return nil, statusError(pod, host, status)
	}
	return func() {
		sched.framework.RunReservePluginsUnreserve(ctx, state, assumedPod, host)
		forget()
	}, nil
}

// completePodGroupAlgorithmResult gives the members the loop did not reach
// (it stopped early) the group's status, so that every queued member has a
// result.
func completePodGroupAlgorithmResult(ctx context.Context, pgInfo *framework.QueuedPodGroupInfo, result *podGroupAlgorithmResult) *podGroupAlgorithmResult {
	queued := pgInfo.QueuedPodInfos[fwk.PodGroupKey(pgInfo.Namespace, pgInfo.Name)]
	for _, pInfo := range queued[len(result.podResults):] {
		state := framework.NewCycleState()
		podsToActivate := framework.NewPodsToActivate()
		state.Write(framework.PodsToActivateKey, podsToActivate)
		// Their nomination is left as it is, as upstream leaves it. They
		// were not tried, so they have no trace task of their own.
		result.podResults = append(result.podResults, algorithmResult{
			podInfo:        pInfo,
			state:          state,
			podsToActivate: podsToActivate,
			err:            groupError(result.status),
			ctx:            memberContext(ctx, pInfo.Pod, pgInfo),
			endTask:        func() {},
		})
	}
	klog.FromContext(ctx).V(5).Info("Pod group algorithm finished", "podGroup", klog.KObj(pgInfo), "status", result.status, "pods", len(result.podResults))
	return result
}

// isRejection says whether a member's error means it fits nowhere (a
// FitError, or no node at all, which upstream's schedulingAlgorithm
// reports as UnschedulableAndUnresolvable), rather than that the cycle
// failed.
func isRejection(err error) bool {
	var fitErr *framework.FitError
	return errors.As(err, &fitErr) || errors.Is(err, ErrNoNodesAvailable)
}

// groupError is the error of a member that the group's status decides.
func groupError(status *fwk.Status) error {
	if status.IsRejected() {
		return &podGroupUnschedulableError{msg: status.Message()}
	}
	return status.AsError()
}

// submitPodGroupAlgorithmResult acts on the simulation's result:
//   - the group may be placed: each member that fitted is assumed in the
//     cache, runs Reserve and Permit (prepareForBindingCycle) and goes to
//     its binding cycle; each that did not fails as a single pod fails;
//   - the group may not: every member fails, a member that fitted with the
//     group's message, one that did not with its own;
//   - an error: every member fails with it, but a member whose own error
//     caused it, which fails with its own.
//
// Then the PodGroup's condition is written, and the group, with the
// members that failed, goes back to the queue.
//
//workshop:part 11/3
func (sched *Scheduler) submitPodGroupAlgorithmResult(ctx context.Context, pgInfo *framework.QueuedPodGroupInfo, result *podGroupAlgorithmResult, start time.Time) {
	logger := klog.FromContext(ctx)
	scheduled, unschedulable := 0, 0
	for _, podResult := range result.podResults {
		pInfo := podResult.podInfo
		podCtx := podResult.ctx
		// A member's attempt lasted as long as its own algorithm: its
		// metrics count from that long ago, as upstream's.
		podStart := time.Now().Add(-podResult.schedulingDuration)
		switch {
		case result.status.IsSuccess() && podResult.err == nil:
			// The binding cycle sees a single pod's state.
			podResult.state.SetPodGroupSchedulingCycle(nil)
			assumedPod, err := sched.prepareForBindingCycle(podCtx, podResult.state, pInfo.Pod, podResult.result)
			if err != nil {
				sched.handleSchedulingFailure(podCtx, pInfo, err, clearNominatedNode, podStart)
				podResult.endTask()
				unschedulable++
				continue
			}
			sched.activatePods(podCtx, podResult.podsToActivate)
			sched.startBindingCycle(podCtx, podResult.state, podResult.result, pInfo, assumedPod, podStart, podResult.endTask)
			scheduled++
			continue
		case result.status.IsError() && (podResult.err == nil || isRejection(podResult.err)):
			sched.handleSchedulingFailure(podCtx, pInfo, result.status.AsError(), clearNominatedNode, podStart)
		case podResult.err == nil:
			sched.handleSchedulingFailure(podCtx, pInfo, groupError(result.status), clearNominatedNode, podStart)
		default:
			sched.handleSchedulingFailure(podCtx, pInfo, podResult.err, podResult.result.nominatingInfo, podStart)
		}
		podResult.endTask()
		unschedulable++
	}
	// The group's attempt, by its result, as upstream's: scheduled when
	// members went to binding, unschedulable when the group did not fit
	// (this chapter has no pod-group preemption, so no
	// waiting_on_preemption), error otherwise.
	switch {
	case result.status.IsSuccess():
		metrics.PodGroupScheduled(sched.framework.ProfileName(), metrics.SinceInSeconds(start))
	case result.status.IsRejected():
		metrics.PodGroupUnschedulable(sched.framework.ProfileName(), metrics.SinceInSeconds(start))
	default:
		metrics.PodGroupScheduleError(sched.framework.ProfileName(), metrics.SinceInSeconds(start))
	}
	if trace.IsEnabled() {
		traceLog(ctx, "decision", fmt.Sprintf("podGroup %s: %d scheduled, %d unschedulable", result.status.Code(), scheduled, unschedulable))
	}
	var condition *metav1.Condition
	switch {
	case result.status.IsSuccess():
		condition = &metav1.Condition{Type: schedulingapi.PodGroupInitiallyScheduled, Status: metav1.ConditionTrue, Reason: "Scheduled", Message: result.status.Message()}
		logger.V(2).Info("Successfully scheduled a pod group", "podGroup", klog.KObj(pgInfo), "scheduledPods", scheduled, "unschedulablePods", unschedulable)
	case result.status.IsRejected():
		condition = &metav1.Condition{Type: schedulingapi.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse, Reason: schedulingapi.PodGroupReasonUnschedulable, Message: result.status.Message()}
		logger.V(2).Info("Unable to schedule a pod group", "podGroup", klog.KObj(pgInfo), "unschedulablePods", unschedulable, "err", result.status.Message())
	default:
		condition = &metav1.Condition{Type: schedulingapi.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse, Reason: schedulingapi.PodGroupReasonSchedulerError, Message: result.status.AsError().Error()}
		logger.Error(result.status.AsError(), "Error scheduling pod group", "podGroup", klog.KObj(pgInfo), "errorPods", len(result.podResults))
	}
	sched.updatePodGroupCondition(ctx, pgInfo.PodGroupInfo, condition)
	if err := sched.queue.AddAttemptedPodGroupIfNeeded(logger, pgInfo, sched.queue.SchedulingCycle(), result.status); err != nil {
		logger.Error(err, "Failed to add attempted pod group to scheduling queue", "podGroup", klog.KObj(pgInfo))
	}
}

// updatePodGroupCondition patches the condition into the PodGroup's
// status, unless it is there already. A group that was scheduled once keeps
// its True condition: a later cycle, for members that came later, does not
// turn it back to False. The patch is sent from the scheduling loop, as
// upstream sends it.
func (sched *Scheduler) updatePodGroupCondition(ctx context.Context, pgi *framework.PodGroupInfo, condition *metav1.Condition) {
	pg := pgi.PodGroup
	if pg == nil {
		return
	}
	if existing := apimeta.FindStatusCondition(pg.Status.Conditions, condition.Type); existing != nil && existing.Status == metav1.ConditionTrue && condition.Status != metav1.ConditionTrue {
		return
	}
	condition.ObservedGeneration = pg.Generation
	condition.LastTransitionTime = metav1.NewTime(sched.clock.Now())
	newStatus := pg.Status.DeepCopy()
	if !apimeta.SetStatusCondition(&newStatus.Conditions, *condition) {
		return
	}
	if err := util.PatchPodGroupStatus(ctx, sched.client, pg.Name, pg.Namespace, &pg.Status, newStatus); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to update PodGroup status", "podGroup", klog.KObj(pg))
	}
}
