package watch

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// ApplyNode records a node as the apiserver has it, or its deletion.
func (l *Lane) ApplyNode(at time.Time, node *v1.Node, deleted bool) {
	l.clock(at)
	if deleted {
		delete(l.Nodes, node.Name)
		return
	}
	n := l.Nodes[node.Name]
	if n == nil {
		n = &Node{Name: node.Name}
		l.Nodes[node.Name] = n
	}
	a := node.Status.Allocatable
	n.Allocatable = Resources{MilliCPU: a.Cpu().MilliValue(), Memory: a.Memory().Value(), Pods: a.Pods().Value()}
	n.Labels = node.Labels
	n.Taints = nil
	for _, t := range node.Spec.Taints {
		n.Taints = append(n.Taints, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
	}
	l.recount()
}

// ApplyPod records a pod as the apiserver has it, or its deletion.
func (l *Lane) ApplyPod(at time.Time, pod *v1.Pod, deleted bool) {
	l.clock(at)
	key := pod.Namespace + "/" + pod.Name
	p := l.pod(key)
	if p.UID != "" && p.UID != string(pod.UID) {
		if deleted {
			// The deletion of an earlier pod of that name, seen late.
			return
		}
		// A new pod of an old name: start afresh. The old one's late log
		// lines, which carry no UID, may still land on it.
		delete(l.Pods, key)
		p = l.pod(key)
	}
	p.UID = string(pod.UID)
	if deleted {
		p.Deleted = true
		p.enter(at, "Deleted", "")
		l.recount()
		return
	}
	if pod.Spec.Priority != nil {
		p.Priority = *pod.Spec.Priority
	}
	p.Requests = requests(pod)
	p.NominatedNode = pod.Status.NominatedNodeName
	p.Condition = ""
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			p.Condition = c.Reason + ": " + c.Message
		}
	}
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		p.PodGroup = pod.Namespace + "/" + *g.PodGroupName
		l.member(p.PodGroup, key)
	}
	if pod.Spec.NodeName != "" && p.Node == "" {
		p.Node = pod.Spec.NodeName
		p.enter(at, Bound, "")
	}
	l.recount()
}

// ApplyEvent records an Event object: the scheduler's Scheduled,
// FailedScheduling and Preempted, and whatever else the cluster reports.
func (l *Lane) ApplyEvent(at time.Time, e *eventsv1.Event, deleted bool) {
	l.clock(at)
	obj := e.Regarding.Name
	if e.Regarding.Namespace != "" {
		obj = e.Regarding.Namespace + "/" + obj
	}
	when := e.EventTime.Time
	if when.IsZero() {
		when = at
	}
	// An Event object is updated (its series grows) and deleted when its
	// time to live ends: the page lists it once, as last seen.
	if i, ok := l.eventIndex[string(e.UID)]; ok && i < len(l.Events) && l.Events[i].UID == string(e.UID) {
		if !deleted {
			l.Events[i].Message = e.Note
		}
		return
	}
	if deleted {
		return
	}
	l.event(Event{At: when, Source: "apiserver", Reason: e.Reason, Object: obj, Message: e.Note, UID: string(e.UID)})
	l.eventIndex[string(e.UID)] = len(l.Events) - 1
}

// recount sums each node's requests over the pods bound to it.
func (l *Lane) recount() {
	for _, n := range l.Nodes {
		n.Requested, n.Pods = Resources{}, nil
	}
	for _, p := range l.Pods {
		n := l.Nodes[p.Node]
		if n == nil || p.Deleted {
			continue
		}
		n.Requested.MilliCPU += p.Requests.MilliCPU
		n.Requested.Memory += p.Requests.Memory
		n.Requested.Pods++
		n.Pods = append(n.Pods, p.Name)
	}
	for _, n := range l.Nodes {
		slices.Sort(n.Pods)
	}
}

// requests is what the scheduler counts of a pod, as NodeResourcesFit
// counts it (resource.PodRequests of k8s.io/component-helpers).
func requests(pod *v1.Pod) Resources {
	r := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return Resources{MilliCPU: r.Cpu().MilliValue(), Memory: r.Memory().Value(), Pods: 1}
}
