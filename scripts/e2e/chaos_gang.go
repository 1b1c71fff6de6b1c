package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
)

// chaosGangSize is the members of each gang the churn creates from chapter
// 11 on, and its minCount: a gang is bound whole or not at all.
const chaosGangSize = 3

// createGangs creates n PodGroups with a gang policy of chaosGangSize, and
// their members: small pods (200m-400m). The PodGroup and its members are
// of the low class, so that the group's priority is its members'.
func (c *chaos) createGangs(ctx context.Context, n int) error {
	if c.gangs == nil {
		c.gangs = map[string]int{}
	}
	first := len(c.gangs)
	for g := first; g < first+n; g++ {
		name := fmt.Sprintf("gang-%04d", g)
		// The members and their PodGroup are of the low class, so that a
		// member and a pod on its own of the same priority compete as
		// victims: v1.37.1 spares the member (MoreImportantVictim).
		pods, err := createGang(ctx, c.r.Client, c.ns, name, "low", func() PodSpec {
			return PodSpec{CPU: fmt.Sprintf("%dm", 100*(2+c.rng.IntN(3))), Memory: "256Mi", PriorityClassName: "low"}
		})
		if err != nil {
			return err
		}
		c.gangs[name] = chaosGangSize
		for _, pod := range pods {
			c.pods[pod.Name] = pod
		}
		c.report.Gangs++
	}
	return nil
}

// createGang creates a PodGroup with a gang policy of chaosGangSize and
// the given PriorityClass of the run (none if empty; its name is scoped to
// ns, as a PodSpec's is), and its members, each with a spec of member's.
func createGang(ctx context.Context, client kubernetes.Interface, ns, name, priorityClass string, member func() PodSpec) ([]*v1.Pod, error) {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: chaosGangSize}
	pg.Spec.PriorityClassName = priorityClassName(ns, priorityClass)
	if _, err := client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating pod group %s: %w", name, err)
	}
	var pods []*v1.Pod
	for m := range chaosGangSize {
		spec := member()
		spec.PodGroup = name
		pod := MakePod(ns, fmt.Sprintf("%s-%d", name, m), spec)
		if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating pod %s: %w", pod.Name, err)
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

// checkGangs checks that no pod-group cycle set out to bind part of a gang,
// and that no gang ended part bound for a reason of the scheduler's.
//
// A cycle's decisions are the Bindings it logged it was about to issue
// ("Attempting to bind pod to node"), each marked with the cycle that
// chose it: a pod-group cycle's line stands for all its members, so the
// Bindings of one cycle share its start. They include Bindings that never
// reached the apiserver (it was down) or that were refused (the pod was
// deleted meanwhile). A cycle's Bindings, with the members set to be bound
// by earlier cycles whose Binding the apiserver accepted and which were
// not deleted before the cycle began, must reach minCount. (A member whose
// Binding failed is tried again in a cycle of its own: it tops up a gang
// that is bound already.) This is what the audit log alone cannot say:
// the Bindings of one cycle reach the apiserver one by one, so a gang is
// part bound for the few milliseconds between its first and last.
//
// At the end, from the audit log alone, every gang has no member bound or
// at least minCount, unless the churn deleted a member or the apiserver
// refused a member's Binding.
func (c *chaos) checkGangs() {
	if len(c.gangs) == 0 {
		return
	}
	_, binds, err := readChaosLog(c.report.Log, c.ns, c.podGroups())
	if err != nil {
		c.violate("reading the scheduler log: %v", err)
		return
	}
	bindings, _, err := readAudit(c.r.Cluster.AuditLog, c.ns, c.start)
	if err != nil {
		c.violate("reading the audit log: %v", err)
		return
	}
	deleted, err := readPodDeletions(c.r.Cluster.AuditLog, c.ns, c.start)
	if err != nil {
		c.violate("reading the audit log: %v", err)
		return
	}
	cycles, violations := judgeGangs(c.gangs, c.podGroups(), binds, bindings, deleted)
	c.report.GangCycles += cycles
	c.report.Violations = append(c.report.Violations, violations...)
}

// judgeGangs is checkGangs on what it read: minCount by gang, the gang of
// each member, the Bindings the scheduler logged, those the apiserver
// recorded, and when members were deleted. It returns how many cycles it
// judged, and what did not hold.
func judgeGangs(gangs map[string]int, groupOf map[string]string, binds []logBind, bindings []binding, deleted map[string]time.Time) (judged int, violations []string) {
	violate := func(format string, args ...any) { violations = append(violations, fmt.Sprintf(format, args...)) }
	// accepted: when the apiserver accepted each member's Binding; refused:
	// the members a Binding was refused for.
	accepted, refused := map[string]time.Time{}, map[string]bool{}
	for _, b := range bindings {
		if _, ok := groupOf[b.Pod]; !ok {
			continue
		}
		if b.Code < 300 {
			accepted[b.Pod] = b.At
		} else {
			refused[b.Pod] = true
		}
	}
	type cycleKey struct {
		group string
		start time.Time
	}
	cycles := map[cycleKey][]logBind{}
	for _, b := range binds {
		if g, ok := groupOf[b.Pod]; ok {
			k := cycleKey{g, b.Cycle}
			cycles[k] = append(cycles[k], b)
		}
	}
	keys := slices.SortedFunc(maps.Keys(cycles), func(a, b cycleKey) int {
		if a.group != b.group {
			return strings.Compare(a.group, b.group)
		}
		return a.start.Compare(b.start)
	})
	for _, k := range keys {
		if k.start.IsZero() {
			violate("gang %s: the log has a Binding for %s with no cycle before it", k.group, cycles[k][0].Pod)
			continue
		}
		// The members set to be bound by earlier cycles that stayed bound.
		before := sets.New[string]()
		for _, b := range binds {
			if groupOf[b.Pod] != k.group || !b.Cycle.Before(k.start) {
				continue
			}
			if _, ok := accepted[b.Pod]; !ok {
				continue
			}
			if at, ok := deleted[b.Pod]; ok && at.Before(k.start) {
				continue
			}
			before.Insert(b.Pod)
		}
		now := sets.New[string]()
		for _, b := range cycles[k] {
			now.Insert(b.Pod)
		}
		if n := before.Union(now).Len(); n < gangs[k.group] {
			violate("gang %s: the cycle of %s set out to bind %v, with %v bound before it: %d of minCount %d",
				k.group, k.start.Format("15:04:05.000000"), sets.List(now), sets.List(before.Difference(now)), n, gangs[k.group])
		}
		judged++
	}
	// The end state, from the audit log.
	bound := map[string][]string{}
	explained := map[string]bool{}
	for pod, g := range groupOf {
		if _, ok := deleted[pod]; ok {
			explained[g] = true
			continue
		}
		if refused[pod] {
			explained[g] = true
		}
		if _, ok := accepted[pod]; ok {
			bound[g] = append(bound[g], pod)
		}
	}
	for _, g := range slices.Sorted(maps.Keys(bound)) {
		if n := len(bound[g]); n < gangs[g] && !explained[g] {
			slices.Sort(bound[g])
			violate("gang %s: %d of minCount %d members bound at the end (%v), none deleted and no Binding refused", g, n, gangs[g], bound[g])
		}
	}
	return judged, violations
}

// readPodDeletions returns when each pod of namespace ns was deleted, from
// the apiserver's audit log (AuditPolicy records pod deletions).
func readPodDeletions(file, ns string, since time.Time) (map[string]time.Time, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]time.Time{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		ref := e.ObjectRef
		if e.Stage != "ResponseComplete" || ref == nil || e.ResponseStatus == nil || e.Verb != "delete" || ref.Resource != "pods" ||
			ref.Subresource != "" || ref.Namespace != ns || e.ResponseStatus.Code >= 300 || e.RequestReceivedTimestamp.Time.Before(since) {
			continue
		}
		if _, ok := out[ref.Name]; !ok {
			out[ref.Name] = e.RequestReceivedTimestamp.Time
		}
	}
	return out, sc.Err()
}

// podGroups maps each pod the run created in a pod group to its group.
func (c *chaos) podGroups() map[string]string {
	out := map[string]string{}
	for name, p := range c.pods {
		if p.Spec.SchedulingGroup != nil {
			out[name] = *p.Spec.SchedulingGroup.PodGroupName
		}
	}
	return out
}
