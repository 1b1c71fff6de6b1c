// Package fit is NodeResourcesFit written by hand: the in-tree plugin that
// keeps a pod off nodes without room for its requests, and scores the
// nodes with room. config/fit.yaml runs it in kube-scheduler v1.37.1 in
// place of the in-tree one, and make compare finds the same placements.
//
// It mirrors pkg/scheduler/framework/plugins/noderesources/fit.go of
// k8s.io/kubernetes v1.37.1 (and resource_allocation.go,
// least_allocated.go, most_allocated.go) without importing it. It leaves
// out what v1.37.1 has behind alpha gates, and refuses to start with them
// on rather than differ quietly (New): the deferred in-place resize of
// InPlacePodVerticalScalingSchedulerPreemption and the placement score of
// TopologyAwareWorkloadScheduling. It has the LeastAllocated and
// MostAllocated scoring strategies, not RequestedToCapacityRatio, and does
// not score extended resources that DRA devices back. It does not learn
// the resources a scheduler extender manages with ignoredByScheduler:
// kube-scheduler writes them into the args of the plugin named
// NodeResourcesFit (buildExtenders in pkg/scheduler/scheduler.go), and
// with NodeResourcesFit disabled it refuses such an extender.
package fit

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	v1helper "k8s.io/kubernetes/pkg/apis/core/v1/helper"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
	"k8s.io/utils/ptr"
)

const (
	// Name is the plugin's name. It cannot be NodeResourcesFit: the
	// in-tree registry has that one.
	Name = "Fit"
	// preFilterStateKey and preScoreStateKey are where PreFilter and
	// PreScore leave the pod's requests for Filter and Score, one key per
	// plugin, so that Fit and NodeResourcesFit can run side by side in a
	// test.
	preFilterStateKey fwk.StateKey = "PreFilter" + Name
	preScoreStateKey  fwk.StateKey = "PreScore" + Name
)

var (
	_ fwk.PreFilterPlugin   = &Fit{}
	_ fwk.FilterPlugin      = &Fit{}
	_ fwk.EnqueueExtensions = &Fit{}
	_ fwk.PreScorePlugin    = &Fit{}
	_ fwk.ScorePlugin       = &Fit{}
	_ fwk.SignPlugin        = &Fit{}
)

// Fit checks that a node has room for a pod's requests, and scores nodes
// by how much room they keep (LeastAllocated) or use (MostAllocated).
type Fit struct {
	ignoredResources      sets.Set[string]
	ignoredResourceGroups sets.Set[string]
	// The feature gates of v1.37.1 that change what Fit does (all on by
	// default, see New).
	enablePodLevelResources                       bool
	enableDRAExtendedResource                     bool
	enableInPlacePodVerticalScaling               bool
	enableInPlacePodLevelResourcesVerticalScaling bool
	handle                                        fwk.Handle
	scorer                                        *resourceAllocationScorer
}

// New builds Fit from NodeResourcesFit's arguments, which it takes as they
// are (config/fit.yaml sets them under name: Fit).
//
// An in-tree plugin gets its arguments decoded and defaulted by
// kube-scheduler: the config decoder knows the kind "<Name>Args" of every
// in-tree plugin (decodeNestedObjects in k8s.io/kube-scheduler/config/v1).
// There is no "FitArgs" kind, so Fit's arrive raw, as a *runtime.Unknown,
// or not at all; New decodes them into NodeResourcesFitArgs and runs
// upstream's defaulting, conversion and validation on them, so that they
// mean exactly what they mean to NodeResourcesFit.
//
// An in-tree plugin also gets the feature gates from the registry
// (runtime.FactoryAdapter in NewInTreeRegistry); an out-of-tree factory
// reads them itself, here, after the command line has set them.
func New(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := decodeArgs(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	if fts.EnableInPlacePodVerticalScalingSchedulerPreemption {
		return nil, fmt.Errorf("%s does not implement the InPlacePodVerticalScalingSchedulerPreemption gate (alpha): use NodeResourcesFit", Name)
	}
	if fts.EnableTopologyAwareWorkloadScheduling {
		return nil, fmt.Errorf("%s does not implement the TopologyAwareWorkloadScheduling gate (alpha): use NodeResourcesFit", Name)
	}
	scorer, err := newScorer(args.ScoringStrategy)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return &Fit{
		ignoredResources:                              sets.New(args.IgnoredResources...),
		ignoredResourceGroups:                         sets.New(args.IgnoredResourceGroups...),
		enablePodLevelResources:                       fts.EnablePodLevelResources,
		enableDRAExtendedResource:                     fts.EnableDRAExtendedResource,
		enableInPlacePodVerticalScaling:               fts.EnableInPlacePodVerticalScaling,
		enableInPlacePodLevelResourcesVerticalScaling: fts.EnableInPlacePodLevelResourcesVerticalScaling,
		handle: h,
		scorer: scorer,
	}, nil
}

// decodeArgs turns what kube-scheduler hands New into defaulted, valid
// NodeResourcesFitArgs: nil or raw JSON (a configuration file), or typed
// args (a test). The raw JSON goes through the scheduler's codecs as
// NodeResourcesFitArgs, as kube-scheduler decodes the in-tree plugin's
// (PluginConfig.decodeNestedObjects in k8s.io/kube-scheduler/config/v1):
// strictly, so a misspelt field is an error, not a default taken quietly,
// and defaulted (SetDefaults_NodeResourcesFitArgs: LeastAllocated over CPU
// and memory, each of weight 1) and converted on the way.
func decodeArgs(obj runtime.Object) (*config.NodeResourcesFitArgs, error) {
	var raw []byte
	switch o := obj.(type) {
	case *config.NodeResourcesFitArgs:
		return o, validation.ValidateNodeResourcesFitArgs(nil, o)
	case nil:
	case *runtime.Unknown:
		raw = o.Raw
	default:
		return nil, fmt.Errorf("args of type %T, want NodeResourcesFitArgs", obj)
	}
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	gvk := configv1.SchemeGroupVersion.WithKind("NodeResourcesFitArgs")
	decoded, _, err := scheme.Codecs.UniversalDecoder().Decode(raw, &gvk, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding args: %w", err)
	}
	args, ok := decoded.(*config.NodeResourcesFitArgs)
	if !ok {
		return nil, fmt.Errorf("args decoded as %T, want NodeResourcesFitArgs", decoded)
	}
	if err := validation.ValidateNodeResourcesFitArgs(nil, args); err != nil {
		return nil, err
	}
	return args, nil
}

// Name returns the plugin's name.
func (f *Fit) Name() string { return Name }

// preFilterState is the pod's requests as Filter compares them.
type preFilterState struct {
	framework.Resource
}

// Clone returns the state itself: nothing changes it after PreFilter.
func (s *preFilterState) Clone() fwk.StateData { return s }

// computePodResourceRequest is the pod's requests for filtering: with its
// pod-level requests (if the gate is on), without defaults for containers
// that request nothing.
func computePodResourceRequest(pod *v1.Pod, podLevel bool) *preFilterState {
	result := &preFilterState{}
	result.SetMaxResource(podRequests(pod, requestOptions{podLevel: podLevel}))
	return result
}

// PreFilter computes the pod's requests once per cycle, for Filter to
// compare with every node. It never rejects a pod: only a node can be
// too small.
func (f *Fit) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	state.Write(preFilterStateKey, computePodResourceRequest(pod, f.enablePodLevelResources))
	return nil, nil
}

// PreFilterExtensions returns nil. The framework adds nominated pods to,
// and removes preemption victims from, a copy of the NodeInfo before
// calling Filter, and Filter reads the node's totals from it: there is
// nothing to update in the state.
func (f *Fit) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func getPreFilterState(state fwk.CycleState) (*preFilterState, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to %s.preFilterState error", c, Name)
	}
	return s, nil
}

// InsufficientResource is one resource a node lacks for a pod.
type InsufficientResource struct {
	ResourceName v1.ResourceName
	Reason       string
	Requested    int64
	Used         int64
	Capacity     int64
	// Unresolvable says that the pod asks for more than the node has at
	// all: evicting pods from it would not help, so preemption does not
	// consider the node (it only looks at nodes whose status is
	// Unschedulable: findCandidates in framework/preemption/preemption.go).
	Unresolvable bool
}

// Filter fails a node that lacks room for the pod, with every reason at
// once ("Insufficient cpu", "Insufficient memory"): the FitError counts
// each.
func (f *Fit) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return fwk.AsStatus(err)
	}
	insufficient := f.fitsRequest(s, nodeInfo)
	if len(insufficient) == 0 {
		return nil
	}
	code := fwk.Unschedulable
	reasons := make([]string, 0, len(insufficient))
	for _, r := range insufficient {
		reasons = append(reasons, r.Reason)
		if r.Unresolvable {
			code = fwk.UnschedulableAndUnresolvable
		}
	}
	return fwk.NewStatus(code, reasons...)
}

// fitsRequest compares the pod's requests with what the node has left:
// its allocatable minus the requests of the pods on it, which NodeInfo
// keeps (with the larger of each running pod's spec and status while it
// is being resized). The order of the checks is upstream's, so the
// reasons come in the same order: pods, CPU, memory, ephemeral storage,
// then the other resources.
//
//workshop:part 13/3
func (f *Fit) fitsRequest(podRequest *preFilterState, nodeInfo fwk.NodeInfo) []InsufficientResource {
	var out []InsufficientResource
	allocatable, requested := nodeInfo.GetAllocatable(), nodeInfo.GetRequested()

	allowedPods := allocatable.GetAllowedPodNumber()
	if len(nodeInfo.GetPods())+1 > allowedPods {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourcePods, Reason: "Too many pods",
			Requested: 1, Used: int64(len(nodeInfo.GetPods())), Capacity: int64(allowedPods),
		})
	}
	// A pod that requests nothing only needs a pod slot.
	if podRequest.MilliCPU == 0 && podRequest.Memory == 0 && podRequest.EphemeralStorage == 0 && len(podRequest.ScalarResources) == 0 {
		return out
	}
	check := func(name v1.ResourceName, want, alloc, used int64) {
		if want > 0 && want > alloc-used {
			out = append(out, InsufficientResource{
				ResourceName: name, Reason: "Insufficient " + string(name),
				Requested: want, Used: used, Capacity: alloc, Unresolvable: want > alloc,
			})
		}
	}
	check(v1.ResourceCPU, podRequest.MilliCPU, allocatable.GetMilliCPU(), requested.GetMilliCPU())
	check(v1.ResourceMemory, podRequest.Memory, allocatable.GetMemory(), requested.GetMemory())
	check(v1.ResourceEphemeralStorage, podRequest.EphemeralStorage, allocatable.GetEphemeralStorage(), requested.GetEphemeralStorage())
	for name, want := range podRequest.ScalarResources {
		if want == 0 || f.ignored(name) || f.shouldDelegateResourceToDRA(name, nodeInfo) {
			continue
		}
		check(name, want, allocatable.GetScalarResources()[name], requested.GetScalarResources()[name])
	}
	return out
}

// ignored says whether the args tell Fit to leave an extended resource to
// someone else (ignoredResources, or its prefix in ignoredResourceGroups).
// Only extended resources (example.com/gpu) can be ignored.
func (f *Fit) ignored(name v1.ResourceName) bool {
	if !v1helper.IsExtendedResourceName(name) {
		return false
	}
	group, _, _ := strings.Cut(string(name), "/")
	return f.ignoredResources.Has(string(name)) || f.ignoredResourceGroups.Has(group)
}

// shouldDelegateResourceToDRA says whether an extended resource the node
// does not list is one a DeviceClass provides through dynamic resource
// allocation (DRAExtendedResource, on and locked in v1.37): the
// DynamicResources plugin checks it then, not Fit. nodeInfo may be nil
// (SignPod has no node).
func (f *Fit) shouldDelegateResourceToDRA(name v1.ResourceName, nodeInfo fwk.NodeInfo) bool {
	if !f.enableDRAExtendedResource {
		return false
	}
	if nodeInfo != nil && nodeInfo.GetAllocatable().GetScalarResources()[name] > 0 {
		return false
	}
	dra := f.draManager()
	return dra != nil && dra.DeviceClassResolver().GetDeviceClass(name) != nil
}

// draManager is the scheduler's view of DRA objects, when DRA is on.
func (f *Fit) draManager() fwk.SharedDRAManager {
	if !f.enableDRAExtendedResource || f.handle == nil {
		return nil
	}
	return f.handle.SharedDRAManager()
}

// preScoreState is the pod's requests as Score counts them, one per
// resource of the scoring strategy.
type preScoreState struct {
	podRequests []int64
}

// Clone returns the state itself: nothing changes it after PreScore.
func (s *preScoreState) Clone() fwk.StateData { return s }

// PreScore computes the pod's requests for scoring once per cycle. Unlike
// NodeResourcesBalancedAllocation, it scores pods that request nothing.
func (f *Fit) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	state.Write(preScoreStateKey, &preScoreState{podRequests: f.scorer.podRequestList(pod)})
	return nil
}

// Score scores the node by the strategy. Without PreScore's state (a
// caller that skipped PreScore), it computes the requests itself.
func (f *Fit) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	var reqs []int64
	if c, err := state.Read(preScoreStateKey); err == nil {
		s, ok := c.(*preScoreState)
		if !ok {
			return 0, fwk.AsStatus(fmt.Errorf("invalid PreScore state, got type %T", c))
		}
		reqs = s.podRequests
	} else {
		reqs = f.scorer.podRequestList(pod)
	}
	return f.scorer.score(ctx, pod, nodeInfo, reqs)
}

// ScoreExtensions returns nil: the strategies score in [0, 100] already.
func (f *Fit) ScoreExtensions() fwk.ScoreExtensions { return nil }

// SignPod returns the pod's requests, under the key every plugin that
// reads them shares (NodeResourcesBalancedAllocation signs the same): two
// pods with equal requests and equal other fragments get the same verdicts
// and scores on the same nodes, so OpportunisticBatching may reuse one's
// scored node list for the other. A pod whose extended resource a DRA
// DeviceClass provides is not signed: its fit depends on devices, not on
// the pod alone.
func (f *Fit) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	req := computePodResourceRequest(pod, f.enablePodLevelResources)
	for name, q := range req.ScalarResources {
		if q != 0 && f.shouldDelegateResourceToDRA(name, nil) {
			return nil, fwk.NewStatus(fwk.Unschedulable, "signature disabled when dra extended resources are used in the cluster")
		}
	}
	return []fwk.SignFragment{{Key: fwk.ResourcesSignerName, Value: req}}, nil
}

// EventsToRegister returns the cluster events after which a pod that Fit
// rejected may fit, each with a queueing hint that looks at the change
// and says whether it could help this pod (Queue) or not (QueueSkip).
// They are NodeResourcesFit's: a pod on a node deleted, a node added or
// given more allocatable, a DeviceClass for an extended resource, and
// in-place resizes that shrink a pod.
func (f *Fit) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	events := []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: f.isSchedulableAfterAssignedPodDelete},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}, QueueingHintFn: f.isSchedulableAfterNodeChange},
	}
	if f.enableDRAExtendedResource {
		events = append(events, fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: fwk.DeviceClass, ActionType: fwk.Add | fwk.Update}, QueueingHintFn: f.isSchedulableAfterDeviceClassEvent})
	}
	if f.enableInPlacePodVerticalScaling {
		events = append(events,
			fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.UpdatePodScaleDown}, QueueingHintFn: f.isSchedulableAfterAssignedPodScaleDown},
			fwk.ClusterEventWithHint{Event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodScaleDown}, QueueingHintFn: f.isSchedulableAfterTargetPodScaleDown})
	}
	return events, nil
}

// isSchedulableAfterAssignedPodDelete: deleting a pod that was on a node
// (or nominated to one) frees room there. Deleting a pod that had neither
// frees nothing.
func (f *Fit) isSchedulableAfterAssignedPodDelete(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	deleted, _, err := schedutil.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if deleted.Spec.NodeName == "" && deleted.Status.NominatedNodeName == "" {
		logger.V(5).Info("the deleted pod was unscheduled and it wouldn't make the unscheduled pod schedulable", "pod", klog.KObj(pod), "deletedPod", klog.KObj(deleted))
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("another scheduled pod was deleted, and it may make the unscheduled pod schedulable", "pod", klog.KObj(pod), "deletedPod", klog.KObj(deleted))
	return fwk.Queue, nil
}

// isSchedulableAfterTargetPodScaleDown: the pod itself got smaller.
func (f *Fit) isSchedulableAfterTargetPodScaleDown(logger klog.Logger, pod *v1.Pod, _, _ any) (fwk.QueueingHint, error) {
	logger.V(5).Info("the target pod got scaled down and it may be schedulable now", "pod", klog.KObj(pod))
	return fwk.Queue, nil
}

// isSchedulableAfterAssignedPodScaleDown: a pod on a node got smaller in
// a resource this pod asks for.
func (f *Fit) isSchedulableAfterAssignedPodScaleDown(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	original, modified, err := schedutil.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if !f.haveEnoughRelevantResourcesDecreased(pod, original, modified) {
		logger.V(5).Info("pod got scaled down, but the modification isn't related to the resource requests of the target pod", "pod", klog.KObj(pod), "modifiedPod", klog.KObj(modified))
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("another scheduled pod got scaled down, and it may make the unscheduled pod schedulable", "pod", klog.KObj(pod), "modifiedPod", klog.KObj(modified))
	return fwk.Queue, nil
}

// haveEnoughRelevantResourcesDecreased compares a running pod's requests
// before and after an in-place resize. A running pod's requests come
// from its status as well as its spec while a resize is under way, so
// this hint uses the API's own computation
// (k8s.io/component-helpers/resource.PodRequests with UseStatusResources),
// as NodeInfo does for the pods on a node; podRequests here covers only
// pods that do not run yet.
func (f *Fit) haveEnoughRelevantResourcesDecreased(target, original, modified *v1.Pod) bool {
	if modified.Spec.NodeName == "" {
		return false
	}
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: f.enableInPlacePodVerticalScaling, InPlacePodLevelResourcesVerticalScalingEnabled: f.enableInPlacePodLevelResourcesVerticalScaling}
	before, after := &framework.Resource{}, &framework.Resource{}
	before.SetMaxResource(resourcehelper.PodRequests(original, opts))
	after.SetMaxResource(resourcehelper.PodRequests(modified, opts))
	for name, q := range resourcehelper.PodRequests(target, opts) {
		if q.IsZero() {
			continue
		}
		switch name {
		case v1.ResourceCPU:
			if before.MilliCPU > after.MilliCPU {
				return true
			}
		case v1.ResourceMemory:
			if before.Memory > after.Memory {
				return true
			}
		case v1.ResourceEphemeralStorage:
			if before.EphemeralStorage > after.EphemeralStorage {
				return true
			}
		default:
			if schedutil.IsScalarResourceName(name) && before.ScalarResources[name] > after.ScalarResources[name] {
				return true
			}
		}
	}
	return false
}

// isSchedulableAfterNodeChange: a node was added, or its allocatable
// changed. A node the pod would not fit even empty cannot help; an added
// one that fits can; an updated one can only if a resource the pod asks
// for grew.
//
//workshop:part 13/5
func (f *Fit) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	original, modified, err := schedutil.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if !f.isFit(pod, modified) {
		logger.V(5).Info("node was created or updated, but it doesn't have enough resource(s) to accommodate this pod", "pod", klog.KObj(pod), "node", klog.KObj(modified))
		return fwk.QueueSkip, nil
	}
	if original == nil {
		logger.V(5).Info("node was added and it might fit the pod's resource requests", "pod", klog.KObj(pod), "node", klog.KObj(modified))
		return fwk.Queue, nil
	}
	if !f.haveAnyRequestedResourcesIncreased(pod, original, modified) {
		logger.V(5).Info("node was updated, but haven't changed the pod's resource requestments fit assessment", "pod", klog.KObj(pod), "node", klog.KObj(modified))
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("node was updated, and may now fit the pod's resource requests", "pod", klog.KObj(pod), "node", klog.KObj(modified))
	return fwk.Queue, nil
}

// isFit says whether the pod would fit the node with no pods on it. The
// hint sees the node object alone, not its pods: only Filter knows those.
func (f *Fit) isFit(pod *v1.Pod, node *v1.Node) bool {
	if node == nil {
		return false
	}
	ni := framework.NewNodeInfo()
	ni.SetNode(node)
	// Fits, in upstream, checks with no ignored resources.
	unignored := &Fit{enableDRAExtendedResource: f.enableDRAExtendedResource, handle: f.handle}
	return len(unignored.fitsRequest(computePodResourceRequest(pod, f.enablePodLevelResources), ni)) == 0
}

// haveAnyRequestedResourcesIncreased says whether the node's update gave
// it more of something the pod asks for (or more pod slots).
func (f *Fit) haveAnyRequestedResourcesIncreased(pod *v1.Pod, original, modified *v1.Node) bool {
	req := computePodResourceRequest(pod, f.enablePodLevelResources)
	before, after := framework.NewNodeInfo(), framework.NewNodeInfo()
	before.SetNode(original)
	after.SetNode(modified)
	a, b := after.GetAllocatable(), before.GetAllocatable()
	if a.GetAllowedPodNumber() > b.GetAllowedPodNumber() {
		return true
	}
	if req.MilliCPU == 0 && req.Memory == 0 && req.EphemeralStorage == 0 && len(req.ScalarResources) == 0 {
		return false
	}
	if (req.MilliCPU > 0 && a.GetMilliCPU() > b.GetMilliCPU()) ||
		(req.Memory > 0 && a.GetMemory() > b.GetMemory()) ||
		(req.EphemeralStorage > 0 && a.GetEphemeralStorage() > b.GetEphemeralStorage()) {
		return true
	}
	for name, q := range req.ScalarResources {
		if q == 0 {
			continue
		}
		if a.GetScalarResources()[name] > b.GetScalarResources()[name] || f.shouldDelegateResourceToDRA(name, after) {
			return true
		}
	}
	return false
}

// isSchedulableAfterDeviceClassEvent: a DeviceClass now provides an
// extended resource the pod asks for, by its explicit
// extendedResourceName or by the implicit
// deviceclass.resource.kubernetes.io/<class>.
func (f *Fit) isSchedulableAfterDeviceClassEvent(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	original, modified, err := schedutil.As[*resourceapi.DeviceClass](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if original != nil {
		if ptr.Deref(original.Spec.ExtendedResourceName, "") == ptr.Deref(modified.Spec.ExtendedResourceName, "") {
			logger.V(5).Info("device class has identical extended resource name", "pod", klog.KObj(pod), "deviceclass", klog.KObj(modified))
			return fwk.QueueSkip, nil
		}
	} else if _, ok := reqs[v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+modified.Name)]; ok {
		logger.V(5).Info("device class was added, and may now fit the pod's resource requests", "pod", klog.KObj(pod), "deviceclass", klog.KObj(modified))
		return fwk.Queue, nil
	}
	if modified.Spec.ExtendedResourceName != nil {
		if _, ok := reqs[v1.ResourceName(*modified.Spec.ExtendedResourceName)]; ok {
			logger.V(5).Info("device class was created or updated, and may fit the pod's resource requests", "pod", klog.KObj(pod), "deviceclass", klog.KObj(modified))
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}
