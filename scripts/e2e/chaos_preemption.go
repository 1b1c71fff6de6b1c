package e2e

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chaosClasses are the priorities of the churn's pods from chapter 09 on:
// most are low or medium; a tenth are high and larger (1 or 2 CPUs), so
// that once the nodes are full they preempt; and one in twenty is high but
// may not preempt (preemptionPolicy Never).
var chaosClasses = []PriorityClassSpec{
	{Name: "low", Value: 10},
	{Name: "medium", Value: 100},
	{Name: "high", Value: 1000},
	{Name: "never", Value: 1000, PreemptionPolicy: string(v1.PreemptNever)},
}

// createPriorityClasses creates chaosClasses for chapters 09 on, scoped to
// the run's namespace; cleanup deletes them.
func (c *chaos) createPriorityClasses(ctx context.Context) error {
	if c.sched.Chapter < PreemptionChapter {
		return nil
	}
	for _, pc := range chaosClasses {
		name := priorityClassName(c.ns, pc.Name)
		obj := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: pc.Value}
		if pc.PreemptionPolicy != "" {
			policy := v1.PreemptionPolicy(pc.PreemptionPolicy)
			obj.PreemptionPolicy = &policy
		}
		if err := CreatePriorityClass(ctx, c.r.Client, c.ns, obj); err != nil {
			return err
		}
		c.classes = append(c.classes, name)
	}
	return nil
}

// prioritize gives a pod one of chaosClasses.
func (c *chaos) prioritize(spec *PodSpec) {
	switch r := c.rng.IntN(20); {
	case r < 2:
		spec.PriorityClassName = "high"
		spec.CPU = fmt.Sprintf("%dm", 1000*(1+c.rng.IntN(2)))
	case r == 2:
		spec.PriorityClassName = "never"
		spec.CPU = "1"
	case r < 8:
		spec.PriorityClassName = "medium"
	default:
		spec.PriorityClassName = "low"
	}
}

// priority is the priority of a pod the run created, from its class.
func (c *chaos) priority(pod string) int32 {
	p := c.pods[pod]
	if p == nil {
		return 0
	}
	for _, pc := range chaosClasses {
		if priorityClassName(c.ns, pc.Name) == p.Spec.PriorityClassName {
			return pc.Value
		}
	}
	return 0
}

// preemptionDecision is a preemption the scheduler logged deciding.
type preemptionDecision struct {
	Pod, Node string
	At        time.Time
}

// preemptedVictim is a victim the scheduler logged deleting.
type preemptedVictim struct {
	Preemptor, Node string
}

// schedulerView is what a chapter's log (-v=3) says it knew, and when:
// after an apiserver restart its informers may take many seconds to catch
// up, so the cluster's own record is no measure of what it had seen.
type schedulerView struct {
	decisions []preemptionDecision
	victims   map[string]preemptedVictim
	// nodeAdded is when it first saw each node; podGone when it saw each
	// bound pod of the namespace deleted; nominated when it nominated each pod
	// to each node.
	nodeAdded map[string]time.Time
	podGone   map[string]time.Time
	nominated map[string]map[string]time.Time
}

var (
	decisionPreemptionLine = regexp.MustCompile(`"the target node for the preemption is determined"`)
	victimLine             = regexp.MustCompile(`"Preemptor Pod preempted victim Pod"`)
	preemptorKey           = regexp.MustCompile(` preemptor="([^"]+)"`)
	victimKey              = regexp.MustCompile(` victim="([^"]+)"`)
	nodeAddedLine          = regexp.MustCompile(`"Add event for node" node="([^"]+)"`)
	// Only a bound pod frees room; "Delete event for unscheduled pod" is
	// also what the handlers log when a pod gets bound.
	podDeletedLine = regexp.MustCompile(`"Delete event for scheduled pod" pod="([^"]+)"`)
	nominationLine = regexp.MustCompile(`"Updating pod condition and nominated node name"`)
	nominatedKey   = regexp.MustCompile(` nominatedNodeName="([^"]+)"`)
)

// readSchedulerView reads a chapter's log (chapter 09 on, -v=3) for namespace
// ns: each preemption decision (preemption.go's Evaluator.Preempt logs the
// chosen node), each victim deleted (executor.go's preemptPod logs the
// preemptor and the node), each nomination (schedule_one.go's updatePod),
// and when the event handlers saw nodes added and pods deleted.
func readSchedulerView(path, ns string) (*schedulerView, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := &schedulerView{victims: map[string]preemptedVictim{}, nodeAdded: map[string]time.Time{}, podGone: map[string]time.Time{}, nominated: map[string]map[string]time.Time{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		at := klogTimeLocal(line)
		switch {
		case decisionPreemptionLine.MatchString(line):
			p, n := podKey.FindStringSubmatch(line), nodeKey.FindStringSubmatch(line)
			if p == nil || n == nil || at.IsZero() {
				return nil, fmt.Errorf("%s: cannot read %q", path, line)
			}
			if pod, ok := inNamespace(p[1], ns); ok {
				v.decisions = append(v.decisions, preemptionDecision{Pod: pod, Node: n[1], At: at})
			}
		case victimLine.MatchString(line):
			// Keys are read one by one: on the synchronous path the line
			// carries the cycle logger's pod= first.
			p, vi, n := preemptorKey.FindStringSubmatch(line), victimKey.FindStringSubmatch(line), nodeKey.FindStringSubmatch(line)
			if p == nil || vi == nil || n == nil {
				return nil, fmt.Errorf("%s: cannot read %q", path, line)
			}
			preemptor, ok1 := inNamespace(p[1], ns)
			victim, ok2 := inNamespace(vi[1], ns)
			if ok1 && ok2 {
				v.victims[victim] = preemptedVictim{Preemptor: preemptor, Node: n[1]}
			}
		case nodeAddedLine.MatchString(line):
			if n := nodeAddedLine.FindStringSubmatch(line)[1]; v.nodeAdded[n].IsZero() {
				v.nodeAdded[n] = at
			}
		case podDeletedLine.MatchString(line):
			if pod, ok := inNamespace(podDeletedLine.FindStringSubmatch(line)[1], ns); ok {
				v.podGone[pod] = at
			}
		case nominationLine.MatchString(line):
			p, n := podKey.FindStringSubmatch(line), nominatedKey.FindStringSubmatch(line)
			if p == nil || n == nil {
				continue // a nomination cleared: nominatedNodeName=""
			}
			if pod, ok := inNamespace(p[1], ns); ok {
				if v.nominated[pod] == nil {
					v.nominated[pod] = map[string]time.Time{}
				}
				if _, seen := v.nominated[pod][n[1]]; !seen {
					v.nominated[pod][n[1]] = at
				}
			}
		}
	}
	return v, sc.Err()
}

func inNamespace(key, ns string) (string, bool) {
	if len(key) > len(ns)+1 && key[:len(ns)+1] == ns+"/" {
		return key[len(ns)+1:], true
	}
	return "", false
}

// klogTimeLocal reads the time of a klog line as a time on this machine's
// clock: klog writes local time without a year, and the scheduler runs here.
func klogTimeLocal(line string) time.Time {
	m := klogTime.FindStringSubmatch(line)
	if m == nil {
		return time.Time{}
	}
	t, err := time.ParseInLocation("0102 15:04:05.000000", m[1], time.Local)
	if err != nil {
		return time.Time{}
	}
	now := time.Now()
	t = t.AddDate(now.Year(), 0, 0)
	if t.After(now.Add(24 * time.Hour)) { // a log from last December, read in January
		t = t.AddDate(-1, 0, 0)
	}
	return t
}

// checkPreemptions checks, from chapter 09 on, the preemption invariants:
//   - every pod deleted by neither the churn nor PodGC was a victim the
//     scheduler logged for a preemptor of strictly higher priority, on the
//     node the victim was bound or assumed to, and carried the
//     DisruptionTarget condition;
//   - no pod preempted although it fitted a node without it (see
//     roomWithout).
func (c *chaos) checkPreemptions() {
	if c.sched.Chapter < PreemptionChapter || c.history == nil {
		return
	}
	view, err := readSchedulerView(c.report.Log, c.ns)
	if err != nil {
		c.violate("reading the scheduler log: %v", err)
		return
	}
	victims := view.victims
	groupOf := c.podGroups()
	_, binds, err := readChaosLog(c.report.Log, c.ns, groupOf)
	if err != nil {
		c.violate("reading the scheduler log: %v", err)
		return
	}
	// A victim may be a pod the scheduler had assumed on the node, its
	// Binding still on its way: upstream's GetVictimsOnNode takes every pod
	// of the NodeInfo, assumed ones too, and the asynchronous preemption
	// deletes what it chose even if that Binding failed meanwhile.
	assumed := map[[2]string]bool{}
	for _, b := range binds {
		assumed[[2]string{b.Pod, b.Node}] = true
	}
	deleted := c.history.Deleted()
	for _, name := range slices.Sorted(maps.Keys(deleted)) {
		if _, churned := c.churned.Load(name); churned {
			continue
		}
		pod := deleted[name]
		v, ok := victims[name]
		switch {
		case !ok:
			c.violate("pod %s was deleted, neither by the churn nor as a preemption victim the scheduler logged", name)
			continue
		case pod.Spec.NodeName != v.Node && !assumed[[2]string{name, v.Node}]:
			c.violate("pod %s was preempted for %s on node %s, but was neither bound (%q) nor assumed there", name, v.Preemptor, v.Node, pod.Spec.NodeName)
		case c.priority(v.Preemptor) <= c.priority(name):
			c.violate("pod %s (priority %d) was preempted for %s, of priority %d", name, c.priority(name), v.Preemptor, c.priority(v.Preemptor))
		case !c.history.Disrupted(name) && !c.history.Missed(name):
			// A deletion the watch missed (it relisted) may have taken
			// the state with the condition with it.
			c.violate("pod %s was preempted without the DisruptionTarget condition", name)
		}
		c.report.Victims++
		if _, member := groupOf[name]; member {
			c.report.GangVictims++
		}
	}
	bindings, nodeChanges, err := readAudit(c.r.Cluster.AuditLog, c.ns, c.start)
	if err != nil {
		c.violate("reading the audit log: %v", err)
		return
	}
	for _, d := range view.decisions {
		c.report.Preemptions++
		if c.aroundOutage(d.At) {
			// The scheduler's view of the cluster is stale around the
			// apiserver's restart: what it did not see cannot be held
			// against it.
			continue
		}
		c.report.PreemptionsChecked++
		if node, free := roomWithout(c.pods[d.Pod], c.priority, d.At, nodeChanges, bindings, view, c.pods); node != "" {
			c.violate("pod %s preempted on node %s at %s although node %s had room for it from %s before (%s)",
				d.Pod, d.Node, d.At.Format(time.StampMicro), node, preemptionLag, free)
		}
	}
	if len(groupOf) > 0 {
		podDeleted, err := readPodDeletions(c.r.Cluster.AuditLog, c.ns, c.start)
		if err != nil {
			c.violate("reading the audit log: %v", err)
			return
		}
		for _, d := range view.decisions {
			if gangMemberOn(d.Node, d.At, groupOf, bindings, podDeleted) {
				c.report.GangCandidates++
			}
		}
	}
	// A run that decided no preemption judged nothing: the workload failed
	// to fill the nodes, which is the harness's failure, not a pass.
	if c.report.Preemptions == 0 {
		c.violate("harness: the run decided no preemption, so the preemption checks judged nothing (the nodes never filled, or the chapter never preempts)")
	}
}

// gangMemberOn says whether a gang member (groupOf) was bound to node at
// t: its Binding accepted before t, and the pod not deleted before t.
func gangMemberOn(node string, t time.Time, groupOf map[string]string, bindings []binding, deleted map[string]time.Time) bool {
	for _, b := range bindings {
		if b.Node != node || b.Code >= 300 || !b.At.Before(t) {
			continue
		}
		if _, member := groupOf[b.Pod]; !member {
			continue
		}
		if del, ok := deleted[b.Pod]; ok && del.Before(t) {
			continue
		}
		return true
	}
	return false
}

// aroundOutage says whether t falls from a second before kube-apiserver was
// stopped to preemptionLag after it answered again. Later decisions are
// judged by what the scheduler's log says it had seen, however late its
// informers reconnected.
func (c *chaos) aroundOutage(t time.Time) bool {
	return !c.outage[0].IsZero() && t.After(c.outage[0].Add(-time.Second)) && t.Before(c.outage[1].Add(preemptionLag))
}

// preemptionLag is the window before a decision through which a node must
// have had room, and bindingLag how long after a pod was assumed its
// Binding may reach the apiserver through the client's rate limiter.
//
// reflectorLag is how recent an update of a node (a label, a taint) may be
// for the node to count: the scheduler logs node updates only at -v=4, so
// the check cannot know when it saw one, and after the apiserver's restart
// its informers may take many seconds to reconnect.
const (
	preemptionLag = 3 * time.Second
	bindingLag    = 30 * time.Second
	reflectorLag  = 30 * time.Second
)

// roomWithout returns a node where pod fitted without preempting anyone
// throughout the preemptionLag before at, and what was left there, or ""
// when there is none. It gives the scheduler every benefit of the doubt: a
// node must have existed, unchanged enough to fit the pod, through the
// whole window, unchanged for reflectorLag before the decision, and the
// scheduler must have seen it added before; it
// counts on the node every pod whose Binding to it the apiserver accepted
// up to bindingLag after at (the scheduler may have assumed it before),
// unless the scheduler had seen that pod deleted before the window; and
// every pod of at least the same priority the scheduler had nominated to
// it by then, whose room it holds. A node that still had room for the pod
// is a preemption that was not needed.
func roomWithout(pod *v1.Pod, priority func(string) int32, at time.Time, nodeChanges map[string][]nodeChange,
	bindings []binding, view *schedulerView, pods map[string]*v1.Pod) (string, string) {
	if pod == nil {
		return "", ""
	}
	from := at.Add(-preemptionLag)
	until := at.Add(bindingLag)
	gone := func(name string) bool { t, ok := view.podGone[name]; return ok && t.Before(from) }
	for _, node := range slices.Sorted(maps.Keys(nodeChanges)) {
		if added, ok := view.nodeAdded[node]; !ok || !added.Before(from) {
			continue
		}
		changes := nodeChanges[node]
		// Its creation is not an update: nodeAdded says when the scheduler
		// saw it.
		if len(changes) > 1 && slices.ContainsFunc(changes[1:], func(ch nodeChange) bool { return ch.Received.After(at.Add(-reflectorLag)) && !ch.Received.After(at) }) {
			continue
		}
		states := nodesAt(changes, from)
		for _, ch := range changes {
			if ch.Received.After(from) && !ch.Received.After(at) {
				states = append(states, ch.Node)
			}
		}
		fits := true
		for _, n := range states {
			if n == nil || staticFit(pod, n) != "" {
				fits = false
				break
			}
		}
		if !fits {
			continue
		}
		counted := map[string]bool{pod.Name: true}
		used := map[string]v1.ResourceList{}
		for _, b := range bindings {
			// A refused Binding counts too: its pod held the room while
			// it was assumed.
			if b.Node == node && !b.At.After(until) && !counted[b.Pod] && !gone(b.Pod) && pods[b.Pod] != nil {
				counted[b.Pod] = true
				addTo(used, node, pods[b.Pod])
			}
		}
		for name, byNode := range view.nominated {
			t, ok := byNode[node]
			if ok && !t.After(at) && !counted[name] && !gone(name) && pods[name] != nil && priority(name) >= priority(pod.Name) {
				counted[name] = true
				addTo(used, node, pods[name])
			}
		}
		addTo(used, node, pod)
		if overCommitted(used[node], states[0].Status.Allocatable) == "" {
			cpu, allocatable := used[node][v1.ResourceCPU], states[0].Status.Allocatable[v1.ResourceCPU]
			return node, fmt.Sprintf("%s cpu requested with the pod, of %s", cpu.String(), allocatable.String())
		}
	}
	return "", ""
}

// checkNominationsEnd waits, from chapter 09 on, until every pod that was
// ever nominated is bound, deleted, or no longer nominated: a nomination
// ends in a binding or is cleared. The leftover flush runs every 30 s and
// moves the pods that waited more than 30 s
// (--pod-max-in-unschedulable-pods-duration), so a pending pod is retried
// within about a minute; a retry that finds no candidate clears its
// nomination, one that waits for a victim still terminating keeps it until
// the next. Two minutes leave room for both.
func (c *chaos) checkNominationsEnd(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c.report.Nominated = len(c.history.Nominations())
	err := pollEvery(ctx, time.Second, "every nomination to end in a binding or be cleared", func() (bool, string, error) {
		pods, err := c.currentPods(ctx)
		if err != nil {
			return false, "", err
		}
		for _, name := range slices.Sorted(maps.Keys(pods)) {
			p := pods[name]
			if p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" {
				return false, fmt.Sprintf("pod %s is still nominated to %s and unbound", name, p.Status.NominatedNodeName), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		c.violate("%v", err)
	}
}
