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
package gang

import (
	"context"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
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
}

var (
	_ fwk.PermitPlugin  = &Gang{}
	_ fwk.ReservePlugin = &Gang{}
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
	return &Gang{handle: h, timeout: timeout}, nil
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
func (g *Gang) Permit(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) (*fwk.Status, time.Duration) {
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
		return fwk.NewStatus(fwk.Wait, fmt.Sprintf("waiting for %d more member(s) of gang %s", size-len(waiting)-1, group)), g.timeout
	}
	for _, wp := range waiting {
		wp.Allow(Name)
	}
	return nil, 0
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
