package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// auditEvent holds the fields of an audit.k8s.io/v1 Event the checks read.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestObject            json.RawMessage  `json:"requestObject"`
	ResponseObject           json.RawMessage  `json:"responseObject"`
	RequestReceivedTimestamp metav1.MicroTime `json:"requestReceivedTimestamp"`
	StageTimestamp           metav1.MicroTime `json:"stageTimestamp"`
}

// binding is one Binding request as the apiserver recorded it.
type binding struct {
	Pod  string
	Node string
	Code int
	At   time.Time
}

// nodeChange is a node as it was after a create, update or patch, or its
// deletion (Node nil). Received is when the apiserver got the request and At
// when it answered. Watchers may see the change anywhere in between: etcd
// commits it, and the watch cache sends it, before the response is written.
type nodeChange struct {
	Received time.Time
	At       time.Time
	Node     *v1.Node
}

// readAudit returns the Bindings into namespace ns and every node change,
// both since the given time, from the apiserver's audit log.
func readAudit(file, ns string, since time.Time) ([]binding, map[string][]nodeChange, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var bindings []binding
	nodes := map[string][]nodeChange{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		if e.Stage != "ResponseComplete" || e.ObjectRef == nil || e.ResponseStatus == nil || e.RequestReceivedTimestamp.Time.Before(since) {
			continue
		}
		ref := e.ObjectRef
		switch {
		case ref.Resource == "pods" && ref.Subresource == "binding" && ref.Namespace == ns:
			var b v1.Binding
			_ = json.Unmarshal(e.RequestObject, &b)
			bindings = append(bindings, binding{Pod: ref.Name, Node: b.Target.Name, Code: e.ResponseStatus.Code, At: e.RequestReceivedTimestamp.Time})
		case ref.Resource == "nodes" && ref.Subresource == "" && e.ResponseStatus.Code < 300:
			change := nodeChange{Received: e.RequestReceivedTimestamp.Time, At: e.StageTimestamp.Time}
			if e.Verb != "delete" {
				change.Node = &v1.Node{}
				if err := json.Unmarshal(e.ResponseObject, change.Node); err != nil {
					return nil, nil, fmt.Errorf("%s: node %s: %w", file, ref.Name, err)
				}
			}
			nodes[ref.Name] = append(nodes[ref.Name], change)
		}
	}
	return bindings, nodes, sc.Err()
}

// nodesAt returns the states of the node that a client could have seen at t:
// the one after the last change answered by t, then those of changes received
// but not yet answered by t. A nil entry means the node did not exist. An
// event-driven scheduler can bind within a millisecond of a label update, so
// a check that only knew answered changes would blame it for acting on a
// change it was already sent.
func nodesAt(changes []nodeChange, t time.Time) []*v1.Node {
	var settled *v1.Node
	var inFlight []*v1.Node
	for _, c := range changes {
		switch {
		case !c.At.After(t):
			settled = c.Node
		case !c.Received.After(t):
			inFlight = append(inFlight, c.Node)
		}
	}
	return append([]*v1.Node{settled}, inFlight...)
}

// checkInvariants checks what must hold in every chapter, whatever the
// scenario: exactly one Binding per bound pod, none rejected, each to a node
// that existed. From chapter 02 on, also: each Binding went to a node the
// pod fits, no node is over-committed, and no pod that fits stays pending.
func (ru *run) checkInvariants(ctx context.Context) ([]string, int) {
	bindings, nodeChanges, err := readAudit(ru.r.Cluster.AuditLog, ru.ns, ru.start)
	if err != nil {
		return []string{"reading the audit log: " + err.Error()}, 0
	}
	podList, err := ru.r.Client.CoreV1().Pods(ru.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}, 0
	}
	final := map[string]*v1.Pod{}
	for i := range podList.Items {
		final[podList.Items[i].Name] = &podList.Items[i]
	}
	var problems []string
	perPod := map[string][]binding{}
	for _, b := range bindings {
		perPod[b.Pod] = append(perPod[b.Pod], b)
	}
	for _, name := range slices.Sorted(maps.Keys(ru.pods)) {
		pod := ru.pods[name]
		if p := final[name]; p != nil {
			pod = p
		}
		bs := perPod[name]
		if len(bs) > 1 {
			problems = append(problems, fmt.Sprintf("pod %s: %d Bindings issued, want one", name, len(bs)))
		}
		if pod.Spec.NodeName != "" && len(bs) == 0 {
			problems = append(problems, fmt.Sprintf("pod %s is bound to %s, but no Binding was issued", name, pod.Spec.NodeName))
		}
		for _, b := range bs {
			if why := rejectionProblem(b, ru.deleted[name], final[name] == nil); why != "" {
				problems = append(problems, fmt.Sprintf("pod %s: %s", name, why))
			}
			if why := bindingProblem(pod, nodesAt(nodeChanges[b.Node], b.At), ru.sched.Chapter >= 2); why != "" {
				problems = append(problems, fmt.Sprintf("pod %s: Binding to %s at %s, %s", name, b.Node, b.At.Format(time.RFC3339Nano), why))
			}
		}
	}
	if ru.sched.Chapter >= 2 {
		problems = append(problems, ru.checkCapacity(ctx, final)...)
	}
	return problems, len(bindings)
}

// rejectionProblem says what is wrong with a Binding the apiserver
// refused, or "". One refusal is no fault: a Binding for a pod the
// scenario deleted, refused as not found. The scheduler's pods and nodes
// come on separate watches, so a node added after the deletion may reach
// it first, and it binds the pod before it sees the deletion;
// kube-scheduler races the same way. The apiserver's 404 keeps the pod
// unbound, and the scheduler drops it (the PodDeleted result).
func rejectionProblem(b binding, deletedByScenario, goneAtEnd bool) string {
	if b.Code < 300 || (b.Code == http.StatusNotFound && deletedByScenario && goneAtEnd) {
		return ""
	}
	return fmt.Sprintf("the apiserver rejected the Binding to %s (HTTP %d)", b.Node, b.Code)
}

// bindingProblem says what is wrong with binding pod to a node that could be
// in any of the given states, or "" when at least one state allows it. The
// fit is checked only when checkFit is set (chapter 01 does not filter).
func bindingProblem(pod *v1.Pod, states []*v1.Node, checkFit bool) string {
	why := "which did not exist"
	for _, n := range states {
		if n == nil {
			continue
		}
		if !checkFit {
			return ""
		}
		w := staticFit(pod, n)
		if w == "" {
			return ""
		}
		why = "which it does not fit: " + w
	}
	return why
}

// checkCapacity checks that no node holds more than its allocatable, and
// that no pending pod of ours fits a node with room for it. The room held
// for pods nominated to a node (status.nominatedNodeName) with a priority
// at least the pending pod's is not room for it, as the scheduler's
// RunFilterPluginsWithNominatedPods counts it (chapter 09 on). From
// chapter 11 on, a pod group's pending members are judged together
// (pendingGangsThatFit).
func (ru *run) checkCapacity(ctx context.Context, pods map[string]*v1.Pod) []string {
	nodeList, err := ru.r.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	used := map[string]v1.ResourceList{}
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		addTo(used, p.Spec.NodeName, p)
	}
	for _, n := range nodeList.Items {
		if over := overCommitted(used[n.Name], n.Status.Allocatable); over != "" {
			problems = append(problems, fmt.Sprintf("node %s is over-committed: %s", n.Name, over))
		}
	}
	nominated := map[string][]*v1.Pod{} // node → pods nominated to it, pending
	for _, p := range pods {
		if n := p.Status.NominatedNodeName; n != "" && p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			nominated[n] = append(nominated[n], p)
		}
	}
	exempt := map[string]bool{}
	for _, pattern := range ru.sc.Expect.MayStayPending {
		for _, name := range ru.podNames(pattern) {
			exempt[name] = true
		}
	}
	groups := map[string][]*v1.Pod{} // pod group → its pending members
	for _, name := range slices.Sorted(maps.Keys(pods)) {
		p := pods[name]
		if p.Spec.NodeName != "" || p.Spec.SchedulerName != DefaultSchedulerName || len(p.Spec.SchedulingGates) > 0 || p.DeletionTimestamp != nil || exempt[name] {
			continue
		}
		// From chapter 11 on a pod group's member may stay pending
		// although it fits alone, if its gang as a whole does not.
		if p.Spec.SchedulingGroup != nil && ru.sched.Chapter >= PodGroupChapter {
			groups[*p.Spec.SchedulingGroup.PodGroupName] = append(groups[*p.Spec.SchedulingGroup.PodGroupName], p)
			continue
		}
		if node := firstFit(nodeList.Items, used, nominated, p); node != "" {
			problems = append(problems, fmt.Sprintf("pod %s stayed pending although it fits node %s", name, node))
		}
	}
	if len(groups) > 0 {
		problems = append(problems, ru.pendingGangsThatFit(ctx, pods, groups, nodeList.Items, used, nominated)...)
	}
	sort.Strings(problems)
	return problems
}

// firstFit returns the first node that p fits, with the room that used
// leaves and that the pods nominated to it of at least p's priority hold,
// or "".
func firstFit(nodes []v1.Node, used map[string]v1.ResourceList, nominated map[string][]*v1.Pod, p *v1.Pod) string {
	for i := range nodes {
		n := &nodes[i]
		if staticFit(p, n) != "" {
			continue
		}
		trial := map[string]v1.ResourceList{n.Name: used[n.Name].DeepCopy()}
		addTo(trial, n.Name, p)
		for _, other := range nominated[n.Name] {
			if other.Name != p.Name && corev1helpers.PodPriority(other) >= corev1helpers.PodPriority(p) {
				addTo(trial, n.Name, other)
			}
		}
		if overCommitted(trial[n.Name], n.Status.Allocatable) == "" {
			return n.Name
		}
	}
	return ""
}

// pendingGangsThatFit judges the pending members of pod groups (chapter 11
// on), group by group. A group may stay pending if its PodGroup is gone,
// or if its members bound and pending cannot reach minCount (the churn
// deleted one). A basic group's members are judged one by one. Otherwise
// the gang is a problem only if it fits in whatever order the scheduler
// places its members (judgePendingGangs). The runs put every pod in one
// namespace: the PodGroups are listed in the members' namespace.
func (ru *run) pendingGangsThatFit(ctx context.Context, pods map[string]*v1.Pod, groups map[string][]*v1.Pod, nodes []v1.Node, used map[string]v1.ResourceList, nominated map[string][]*v1.Pod) []string {
	var ns string
	for _, members := range groups {
		ns = members[0].Namespace
		break
	}
	list, err := ru.r.Client.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{fmt.Sprintf("listing pod groups: %v", err)}
	}
	minCount := map[string]int{} // 0: a basic group, without a minimum
	for _, pg := range list.Items {
		if pg.DeletionTimestamp != nil {
			continue
		}
		minCount[pg.Name] = 0
		if pg.Spec.SchedulingPolicy.Gang != nil {
			minCount[pg.Name] = int(pg.Spec.SchedulingPolicy.Gang.MinCount)
		}
	}
	return judgePendingGangs(minCount, pods, groups, nodes, used, nominated)
}

// judgePendingGangs is pendingGangsThatFit on what it read: minCount by
// pod group (0 for a basic group; a group not listed has no PodGroup).
//
// The pod-group cycle places the members one after the other, each where
// Filter and Score put it, and never moves one it placed (chapter 11's
// podGroupSchedulingDefaultAlgorithm, as upstream's in
// schedule_one_podgroup.go). A gang that fits
// in one order may not fit in the order the scheduler took: a node's room
// taken by a small member may be what a large one needed. So each member
// is placed first fit as if it requested, for every resource, as much as
// the largest member does. If all fit so, every node that held k of these
// still has room for k of the real members whatever their order (a member
// takes at most one such slot), and any order places the gang: it should
// have been bound, a problem. Otherwise the gang is not judged.
func judgePendingGangs(minCount map[string]int, pods map[string]*v1.Pod, groups map[string][]*v1.Pod, nodes []v1.Node, used map[string]v1.ResourceList, nominated map[string][]*v1.Pod) []string {
	bound := map[string]int{} // members bound and running, as the scheduler counts them
	for _, p := range pods {
		if p.Spec.SchedulingGroup != nil && p.Spec.NodeName != "" && p.DeletionTimestamp == nil &&
			p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			bound[*p.Spec.SchedulingGroup.PodGroupName]++
		}
	}
	var problems []string
	for _, group := range slices.Sorted(maps.Keys(groups)) {
		members := groups[group]
		want, ok := minCount[group]
		if !ok || bound[group]+len(members) < want {
			continue
		}
		if want == 0 {
			// A basic group binds what fits: each member is judged alone.
			for _, p := range members {
				if node := firstFit(nodes, used, nominated, p); node != "" {
					problems = append(problems, fmt.Sprintf("pod %s of basic pod group %s stayed pending although it fits node %s", p.Name, group, node))
				}
			}
			continue
		}
		trial := map[string]v1.ResourceList{}
		for node, u := range used {
			trial[node] = u.DeepCopy()
		}
		largest := largestRequests(members)
		var placed []string
		for _, p := range members {
			slot := asLarge(p, largest)
			node := firstFit(nodes, trial, nominated, slot)
			if node == "" {
				break
			}
			addTo(trial, node, slot)
			placed = append(placed, p.Name+"→"+node)
		}
		if len(placed) == len(members) {
			problems = append(problems, fmt.Sprintf("pod group %s (minCount %d, %d bound) stayed pending although its members fit: %s", group, want, bound[group], strings.Join(placed, ", ")))
		}
	}
	return problems
}

// largestRequests is, for each resource, the largest request among pods.
func largestRequests(pods []*v1.Pod) v1.ResourceList {
	largest := v1.ResourceList{}
	for _, p := range pods {
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			if cur, ok := largest[name]; !ok || q.Cmp(cur) > 0 {
				largest[name] = q
			}
		}
	}
	return largest
}

// asLarge is p, with its constraints, requesting requests in one container.
func asLarge(p *v1.Pod, requests v1.ResourceList) *v1.Pod {
	slot := p.DeepCopy()
	slot.Spec.InitContainers, slot.Spec.Overhead, slot.Spec.Resources = nil, nil, nil
	slot.Spec.Containers = []v1.Container{{Name: "slot", Resources: v1.ResourceRequirements{Requests: requests.DeepCopy()}}}
	return slot
}

// addTo adds a pod's requests, and one pod, to a node's usage.
func addTo(used map[string]v1.ResourceList, node string, p *v1.Pod) {
	u := used[node]
	if u == nil {
		u = v1.ResourceList{}
		used[node] = u
	}
	for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
		sum := u[name]
		sum.Add(q)
		u[name] = sum
	}
	count := u[v1.ResourcePods]
	count.Add(resource.MustParse("1"))
	u[v1.ResourcePods] = count
}

func overCommitted(used, allocatable v1.ResourceList) string {
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
		u, ok := used[name]
		if !ok {
			continue
		}
		if a := allocatable[name]; u.Cmp(a) > 0 {
			return fmt.Sprintf("%s requested %s of %s allocatable", name, u.String(), a.String())
		}
	}
	return ""
}

// staticFit says why a pod cannot run on a node regardless of other pods
// ("" if it can): the node is unschedulable, has a NoSchedule or NoExecute
// taint the pod does not tolerate, fails the pod's required node affinity or
// nodeSelector, or is smaller than the pod's requests.
func staticFit(p *v1.Pod, n *v1.Node) string {
	if n.Spec.Unschedulable {
		unschedulable := &v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}
		if !corev1helpers.TolerationsTolerateTaint(klog.Background(), p.Spec.Tolerations, unschedulable, false) {
			return "the node is unschedulable"
		}
	}
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, p.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}, false)
	if untolerated {
		return fmt.Sprintf("untolerated taint %s", taint.ToString())
	}
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(p).Match(n); !ok {
		return "the node does not match the pod's node affinity or selector"
	}
	alone := map[string]v1.ResourceList{}
	addTo(alone, n.Name, p)
	if over := overCommitted(alone[n.Name], n.Status.Allocatable); over != "" {
		return "the pod alone exceeds the node: " + over
	}
	return ""
}

// preempted lists, sorted, the pods deleted during the run that no
// deletePods step deleted: only the scheduler deletes pods here, and only
// to preempt them.
func (ru *run) preempted() []string {
	var out []string
	for name := range ru.history.Deleted() {
		if !ru.deleted[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// checkPreemption checks, in every chapter, that the pods the scheduler
// deleted are exactly the scenario's expected victims, each marked with the
// DisruptionTarget condition (reason PreemptionByScheduler) before it was
// deleted, as upstream's executor.go (preemptPod) does; and that each pod
// of expect.nominated was nominated as expected.
func (ru *run) checkPreemption() []string {
	if ru.history == nil {
		return nil
	}
	want := map[string]bool{}
	for _, pattern := range ru.sc.Expect.Preempted {
		for _, name := range ru.podNames(pattern) {
			want[name] = true
		}
	}
	deleted := ru.history.Deleted()
	var problems []string
	for _, name := range ru.preempted() {
		if !want[name] {
			problems = append(problems, fmt.Sprintf("pod %s was deleted by the scheduler, but is not an expected victim", name))
			continue
		}
		if !ru.history.Disrupted(name) {
			problems = append(problems, fmt.Sprintf("pod %s was preempted without the condition %s with reason %s", name, v1.DisruptionTarget, v1.PodReasonPreemptionByScheduler))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if deleted[name] == nil {
			problems = append(problems, fmt.Sprintf("pod %s, an expected victim, was not deleted", name))
		}
	}
	nominations := ru.history.Nominations()
	for _, pattern := range slices.Sorted(maps.Keys(ru.sc.Expect.Nominated)) {
		node := ru.sc.Expect.Nominated[pattern]
		for _, name := range ru.podNames(pattern) {
			got := nominations[name]
			switch {
			case node == "" && len(got) > 0:
				problems = append(problems, fmt.Sprintf("pod %s was nominated to %s, want never nominated", name, strings.Join(got, ", ")))
			case node != "" && !slices.Contains(got, node):
				problems = append(problems, fmt.Sprintf("pod %s was nominated to %v, want %s", name, got, node))
			}
		}
	}
	return problems
}

// hasCondition says whether the pod carries condition t, true, with the
// reason.
func hasCondition(p *v1.Pod, t v1.PodConditionType, reason string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t && c.Status == v1.ConditionTrue && c.Reason == reason {
			return true
		}
	}
	return false
}
