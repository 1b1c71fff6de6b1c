// Package gang is a Permit plugin written in chapter 04: a small gang gate.
// Pods labelled minisched.io/group=G belong to gang G (within their
// namespace), whose size is the label minisched.io/group-size=K. A member
// waits at Permit, holding its node, until K members of its gang are
// waiting; then all of them are allowed at once. If that does not happen
// within the timeout, the waiting members are rejected, give their nodes
// back, and are retried later. Pods without the label pass straight
// through.
//
// This is the all-or-nothing idea of the coscheduling plugin in
// kubernetes-sigs/scheduler-plugins and of upstream's GangScheduling plugin,
// cut down to what Permit and WaitingPod can show.
//
// From chapter 08 on, the plugin tells the queue which events could help a
// member it rejected, with a queueing hint: only a new pod of the same
// gang. And a member that waits asks the queue to try its siblings at once
// (PodsToActivate): a sibling that failed, or timed out, while this one was
// not there may fit now, and no cluster event would tell the queue.
// Upstream's GangScheduling plugin calls Handle.Activate, which moves them
// at once; PodsToActivate moves them when this scheduling cycle ends.
package gang

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
)

const (
	// Name is the plugin's name.
	Name = "Gang"
	// GroupLabel names a pod's gang.
	GroupLabel = "minisched.io/group"
	// GroupSizeLabel says how many members must wait before all may go.
	GroupSizeLabel = "minisched.io/group-size"
	// DefaultTimeout is how long a member waits for the others.
	DefaultTimeout = 30 * time.Second
)

// Gang is the gate.
type Gang struct {
	handle  fwk.Handle
	timeout time.Duration
	// podLister lists a gang's members, from the handle's informers; nil
	// when the handle has none (then no sibling is activated).
	podLister corelisters.PodLister
}

var (
	_ fwk.PermitPlugin      = &Gang{}
	_ fwk.ReservePlugin     = &Gang{}
	_ fwk.EnqueueExtensions = &Gang{}
)

// Args configure the plugin, as upstream's plugins are configured by typed
// args (NodeResourcesFitArgs and the like) that the framework hands to
// their factory.
type Args struct {
	metav1.TypeMeta
	// Timeout is how long a member waits for the others.
	Timeout time.Duration
}

// DeepCopyObject makes Args a runtime.Object.
func (a *Args) DeepCopyObject() runtime.Object {
	c := *a
	return &c
}

// New builds the plugin, with the signature of upstream's in-tree
// factories. Without args, members wait DefaultTimeout.
func New(_ context.Context, obj runtime.Object, h fwk.Handle, _ feature.Features) (fwk.Plugin, error) {
	timeout := DefaultTimeout
	if obj != nil {
		args, ok := obj.(*Args)
		if !ok {
			return nil, fmt.Errorf("want args of type gang.Args, got %T", obj)
		}
		timeout = args.Timeout
	}
	g := &Gang{handle: h, timeout: timeout}
	if f := h.SharedInformerFactory(); f != nil {
		g.podLister = f.Core().V1().Pods().Lister()
	}
	return g, nil
}

// Name returns the plugin's name.
func (g *Gang) Name() string { return Name }

// groupOf returns the pod's gang and its size; size 0 means no gang.
func groupOf(pod *v1.Pod) (string, int) {
	group := pod.Labels[GroupLabel]
	size, err := strconv.Atoi(pod.Labels[GroupSizeLabel])
	if group == "" || err != nil || size < 1 {
		return "", 0
	}
	return group, size
}

// sameGang says whether other is a member of pod's gang.
func sameGang(pod, other *v1.Pod) bool {
	g, _ := groupOf(pod)
	og, _ := groupOf(other)
	return g != "" && g == og && pod.Namespace == other.Namespace
}

// Permit lets a pod without a gang through. A member completes its gang if
// enough others are already waiting: then it allows them all and goes on
// itself. Otherwise it waits, for at most the timeout.
//
//workshop:part 04/1
func (g *Gang) Permit(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ string) (*fwk.Status, time.Duration) {
	group, size := groupOf(pod)
	if size == 0 {
		return nil, 0
	}
	var waiting []fwk.WaitingPod
	g.handle.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if sameGang(pod, wp.GetPod()) {
			waiting = append(waiting, wp)
		}
	})
	if len(waiting)+1 < size {
		g.activateSiblings(state, pod, waiting)
		return fwk.NewStatus(fwk.Wait, fmt.Sprintf("waiting for %d more member(s) of gang %s", size-len(waiting)-1, group)), g.timeout
	}
	for _, wp := range waiting {
		wp.Allow(Name)
	}
	return nil, 0
}

// activateSiblings puts in the CycleState's PodsToActivate the members of
// pod's gang that neither wait at Permit nor are bound: the scheduler asks
// the queue to try them at once when this cycle ends.
func (g *Gang) activateSiblings(state fwk.CycleState, pod *v1.Pod, waiting []fwk.WaitingPod) {
	if g.podLister == nil {
		return
	}
	c, err := state.Read(framework.PodsToActivateKey)
	if err != nil {
		return
	}
	podsToActivate, ok := c.(*framework.PodsToActivate)
	if !ok {
		return
	}
	group, _ := groupOf(pod)
	members, err := g.podLister.Pods(pod.Namespace).List(labels.SelectorFromSet(labels.Set{GroupLabel: group}))
	if err != nil {
		return
	}
	podsToActivate.Lock()
	defer podsToActivate.Unlock()
	for _, m := range members {
		if m.UID == pod.UID || m.Spec.NodeName != "" || !sameGang(pod, m) || slices.ContainsFunc(waiting, func(wp fwk.WaitingPod) bool { return wp.GetPod().UID == m.UID }) {
			continue
		}
		podsToActivate.Map[m.Namespace+"/"+m.Name] = m
	}
}

// Reserve has nothing to do: the scheduler's assume already holds the node.
func (g *Gang) Reserve(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	return nil
}

// Unreserve runs when a member fails after Reserve, for instance when its
// wait timed out. The whole gang gives up with it: the members still
// waiting are rejected now, so none of them keeps a node for a gang that
// will not start.
//
//workshop:part 04/1
func (g *Gang) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	group, size := groupOf(pod)
	if size == 0 {
		return
	}
	g.handle.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if sameGang(pod, wp.GetPod()) && wp.GetPod().UID != pod.UID {
			wp.Reject(Name, fmt.Sprintf("member %s of gang %s was rejected", pod.Name, group))
		}
	})
}

// EventsToRegister says which events could make a member that the plugin
// rejected schedulable: a new pod, which may be the member its gang lacked.
// Without it (chapters 04-07), the plugin got every event, and a rejected
// member was tried again on any change in the cluster.
//
//workshop:part 08/1
func (g *Gang) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Add}, QueueingHintFn: g.isSchedulableAfterPodAdded},
	}, nil
}

// isSchedulableAfterPodAdded answers Queue for a new pod of the rejected
// member's gang, and QueueSkip for any other pod, including a pod without
// a gang: the gang is no closer to complete.
//
//workshop:part 08/1
func (g *Gang) isSchedulableAfterPodAdded(logger klog.Logger, pod *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	added, ok := newObj.(*v1.Pod)
	if !ok {
		return fwk.Queue, fmt.Errorf("want the new object of a pod Add event to be a *v1.Pod, got %T", newObj)
	}
	if added.UID == pod.UID || !sameGang(pod, added) {
		logger.V(5).Info("The new pod is not a member of the pod's gang", "pod", klog.KObj(pod), "newPod", klog.KObj(added))
		return fwk.QueueSkip, nil
	}
	logger.V(5).Info("A new member of the pod's gang was added", "pod", klog.KObj(pod), "newPod", klog.KObj(added))
	return fwk.Queue, nil
}
