package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chaosGangSize is the members of each gang the churn creates from chapter
// 11 on, and its minCount: a gang is bound whole or not at all.
const chaosGangSize = 3

// gangBurstGap separates two bursts of a gang's Bindings: a pod-group
// cycle assumes its members one after the other and starts their binding
// goroutines, within a fraction of a second; a later cycle, for members
// that came back, starts after a backoff of a second or more.
const gangBurstGap = 500 * time.Millisecond

// createGangs creates n PodGroups with a gang policy of chaosGangSize, and
// their members: small pods (200m-400m), of no PriorityClass, as the
// PodGroup has none (a pod group's members must have its priority).
func (c *chaos) createGangs(ctx context.Context, n int) error {
	if c.gangs == nil {
		c.gangs = map[string]int{}
	}
	first := len(c.gangs)
	for g := first; g < first+n; g++ {
		name := fmt.Sprintf("gang-%04d", g)
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: name}}
		pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: chaosGangSize}
		if _, err := c.r.Client.SchedulingV1beta1().PodGroups(c.ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod group %s: %w", name, err)
		}
		c.gangs[name] = chaosGangSize
		for m := range chaosGangSize {
			spec := PodSpec{CPU: fmt.Sprintf("%dm", 100*(2+c.rng.IntN(3))), Memory: "256Mi", PodGroup: name}
			pod := makePod(c.ns, fmt.Sprintf("%s-%d", name, m), spec)
			c.pods[pod.Name] = pod
			if _, err := c.r.Client.CoreV1().Pods(c.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating pod %s: %w", pod.Name, err)
			}
		}
		c.report.Gangs++
	}
	return nil
}

// checkGangs checks that the scheduler never set out to bind part of a
// gang. Its decisions are the Bindings it logged it was about to issue
// ("Attempting to bind pod to node"), which include those that never
// reached the apiserver (it was down) or that it refused (the pod was
// deleted meanwhile). A gang's decisions come in bursts, one per pod-group
// cycle that placed members: each burst, with the members still bound
// from earlier ones, must reach minCount. The members still bound are read
// from the audit log: the Bindings it accepted, less the pods deleted since
// (by the churn, by PodGC, or as preemption victims, which a gang's
// members are when their PodGroup's disruptionMode is single, the default).
// A gang may so be left part bound, but never by the scheduler's choice.
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
	groupOf := c.podGroups()
	decisions := map[string][]logBind{}
	for _, b := range binds {
		if g, ok := groupOf[b.Pod]; ok {
			decisions[g] = append(decisions[g], b)
		}
	}
	accepted := map[string][]binding{}
	for _, b := range bindings {
		if g, ok := groupOf[b.Pod]; ok && b.Code < 300 {
			accepted[g] = append(accepted[g], b)
		}
	}
	for _, g := range slices.Sorted(maps.Keys(decisions)) {
		ds := decisions[g]
		slices.SortFunc(ds, func(a, b logBind) int { return a.At.Compare(b.At) })
		for start := 0; start < len(ds); {
			end := start + 1
			for end < len(ds) && ds[end].At.Sub(ds[end-1].At) <= gangBurstGap {
				end++
			}
			// Bound before the burst and not deleted by then. The log's
			// clock and the apiserver's are the same machine's.
			alive := 0
			for _, b := range accepted[g] {
				if !b.At.Before(ds[start].At) {
					continue
				}
				if at, ok := deleted[b.Pod]; !ok || at.After(ds[start].At) {
					alive++
				}
			}
			if alive+end-start < c.gangs[g] {
				c.violate("gang %s: a cycle set out to bind %d member(s) at %s, with %d still bound before, minCount %d",
					g, end-start, ds[start].At.Format("15:04:05.000"), alive, c.gangs[g])
			}
			c.report.GangBursts++
			start = end
		}
	}
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
