package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OutageConfig sizes the lost-apiserver probe that follows each chaos run.
// The chaos run's own restart of kube-apiserver is short, and what the
// scheduler logs during it is luck. The probe makes the loss certain: it
// cuts the scheduler off from kube-apiserver (a partition) while the
// scheduler is binding, for MinDown and until the scheduler has logged a
// refused connection, or for MaxDown.
//
// What the scheduler logs is client-go's. The cut ends the informers'
// watches; the reflectors watch again at once (watches skip the rate
// limiter), are refused, log it and retry with a growing delay. Bindings
// mostly survive the cut unseen: the DefaultBinder retries a refused one
// up to four times, and each try waits its turn in the rate limiter, about
// eleven seconds at QPS requests a second.
type OutageConfig struct {
	Nodes, Pods      int
	QPS              int
	MinDown, MaxDown time.Duration
	// Wait bounds the time for every pod to be bound after the cut.
	Wait time.Duration
}

// DefaultOutage binds 60 pods at 5 requests a second, about 12 s of work.
// From chapter 11 on, 10 gangs of three are among them.
var DefaultOutage = OutageConfig{Nodes: 4, Pods: 60, QPS: 5, MinDown: 5 * time.Second, MaxDown: 30 * time.Second, Wait: 2 * time.Minute}

// outageGangs is how many of the probe's pods are gangs' members, from
// chapter 11 on: a Binding lost in the cut must not leave a gang part
// bound.
const outageGangs = 10

// OutageReport is what the probe saw.
type OutageReport struct {
	// Pods counts the pods created, the one created after the cut included.
	Pods int
	// BoundBefore is how many pods were bound at the cut, Bound how many
	// at the end.
	BoundBefore, Bound int
	// Errors counts the lines the scheduler logged about refused
	// connections from the cut on (outageLine).
	Errors int
	// Down is how long the scheduler was cut off.
	Down              time.Duration
	Bindings, Refused int
	// Gangs is the PodGroups among the pods (from chapter 11 on),
	// GangCycles the cycles that bound their members (judgeGangs).
	Gangs, GangCycles int
	Violations        []string
	Log               string
}

// Outage runs sched with a slow client through a partition, cuts it off
// from kube-apiserver while it is binding, and restores the connection once
// the scheduler has logged a refused connection. The scheduler must log it,
// stay up, bind every pod exactly once afterwards, and bind a pod created
// after the cut ended, which it can only learn of if its informers resumed
// their watches.
func (r *Runner) Outage(ctx context.Context, sched Scheduler, cfg OutageConfig) OutageReport {
	ru := r.newRun(&Scenario{Name: "outage"}, sched, fmt.Sprintf("outage-%02d", sched.Chapter))
	rep := OutageReport{Pods: cfg.Pods + 1, Log: filepath.Join(r.LogDir, ru.ns+".log")}
	violate := func(format string, args ...any) {
		rep.Violations = append(rep.Violations, fmt.Sprintf(format, args...))
	}
	p, err := partitionKubeconfig(r.Cluster.Kubeconfig, filepath.Join(r.LogDir, ru.ns+".kubeconfig"))
	var from int64
	if err == nil {
		from, err = playOutage(ctx, ru, p, cfg, &rep)
	}
	if err != nil {
		violate("%v", err)
	}
	if ru.proc != nil {
		if ru.proc.Exited() {
			violate("the scheduler exited: %v", ru.proc.Err())
		} else if err := ru.proc.StopAs(sched); err != nil {
			violate("%v", err)
		}
	}
	if p != nil {
		p.Close()
	}
	if err == nil {
		if rep.Errors, err = countLines(rep.Log, from, outageLine); err != nil {
			violate("reading the scheduler log: %v", err)
		} else if rep.Errors == 0 {
			violate("the scheduler logged no refused connection in the %s it was cut off", rep.Down.Round(time.Second))
		}
		if bindings, _, err := readAudit(r.Cluster.AuditLog, ru.ns, ru.start); err != nil {
			violate("reading the audit log: %v", err)
		} else {
			rep.Bindings, rep.Refused = checkBoundOnce(ru, bindings, violate)
			if rep.Gangs > 0 {
				judgeOutageGangs(ru, &rep, bindings, violate)
			}
		}
	}
	if err := ru.cleanup(); err != nil {
		violate("cleanup: %v", err)
	}
	return rep
}

// playOutage creates the nodes and pods, starts the scheduler through p,
// cuts p once BoundBefore pods are bound, restores it, and creates one more
// pod. It returns the size of the scheduler's log at the cut.
func playOutage(ctx context.Context, ru *run, p *partition, cfg OutageConfig, rep *OutageReport) (int64, error) {
	client := ru.r.Client
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ru.ns}}, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("creating the namespace: %w", err)
	}
	err := parallel(ctx, cfg.Nodes, func(i int) error {
		_, err := client.CoreV1().Nodes().Create(ctx, MakeNode(fmt.Sprintf("%s-node-%d", ru.ns, i), NodeSpec{CPU: "8", Memory: "32Gi"}), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return 0, err
	}
	single := cfg.Pods
	if ru.sched.Chapter >= PodGroupChapter {
		single -= outageGangs * chaosGangSize
		rep.Gangs = outageGangs
	}
	err = parallel(ctx, single, func(i int) error {
		_, err := client.CoreV1().Pods(ru.ns).Create(ctx, MakePod(ru.ns, fmt.Sprintf("pod-%03d", i), PodSpec{CPU: "100m", Memory: "128Mi"}), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return 0, err
	}
	err = parallel(ctx, rep.Gangs, func(i int) error {
		_, err := createGang(ctx, client, ru.ns, outageGangName(i), "", func() PodSpec { return PodSpec{CPU: "100m", Memory: "128Mi"} })
		return err
	})
	if err != nil {
		return 0, err
	}
	qps := strconv.Itoa(cfg.QPS)
	// At -v=4 the reflectors log each failed watch ("Watch failed -
	// backing off"), so a cut always shows in the log.
	extra := []string{"-v=4", "--kube-api-qps=" + qps, "--kube-api-burst=1"}
	if ru.proc, err = StartScheduler(ru.sched, filepath.Join(ru.r.LogDir, ru.ns+".kubeconfig"), extra, rep.Log); err != nil {
		return 0, err
	}
	if err := ru.proc.WaitServing(); err != nil {
		return 0, err
	}
	bound := func() (int, error) {
		pods, err := client.CoreV1().Pods(ru.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		n := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				n++
			}
		}
		return n, nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, cfg.Wait)
	defer cancel()
	if err := poll(waitCtx, "the first pods to be bound", func() (bool, string, error) {
		n, err := bound()
		rep.BoundBefore = n
		return n >= cfg.QPS, fmt.Sprintf("%d bound", n), err
	}); err != nil {
		return 0, err
	}
	info, err := os.Stat(rep.Log)
	if err != nil {
		return 0, err
	}
	p.Cut()
	cut := time.Now()
	for time.Since(cut) < cfg.MaxDown && !ru.proc.Exited() {
		if n, err := countLines(rep.Log, info.Size(), outageLine); err != nil || (n > 0 && time.Since(cut) >= cfg.MinDown) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	rep.Down = time.Since(cut)
	if err := p.Restore(); err != nil {
		return 0, err
	}
	if rep.BoundBefore >= cfg.Pods {
		return 0, fmt.Errorf("all %d pods were bound before the cut; the probe proves nothing", cfg.Pods)
	}
	if _, err := client.CoreV1().Pods(ru.ns).Create(ctx, MakePod(ru.ns, "pod-after-cut", PodSpec{CPU: "100m", Memory: "128Mi"}), metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	waitCtx, cancel = context.WithTimeout(ctx, cfg.Wait)
	defer cancel()
	err = poll(waitCtx, "every pod to be bound after the cut", func() (bool, string, error) {
		if ru.proc.Exited() {
			return false, "", fmt.Errorf("the scheduler exited: %v", ru.proc.Err())
		}
		n, err := bound()
		rep.Bound = n
		return n == rep.Pods, fmt.Sprintf("%d of %d bound", n, rep.Pods), err
	})
	return info.Size(), err
}

func outageGangName(i int) string { return fmt.Sprintf("gang-%02d", i) }

// judgeOutageGangs judges the probe's gangs as checkGangs judges the
// churn's: no cycle set out to bind part of a gang, through the cut.
func judgeOutageGangs(ru *run, rep *OutageReport, bindings []binding, violate func(string, ...any)) {
	groupOf, gangs := map[string]string{}, map[string]int{}
	for i := range rep.Gangs {
		g := outageGangName(i)
		gangs[g] = chaosGangSize
		for m := range chaosGangSize {
			groupOf[fmt.Sprintf("%s-%d", g, m)] = g
		}
	}
	_, binds, err := readChaosLog(rep.Log, ru.ns, groupOf)
	if err != nil {
		violate("reading the scheduler log: %v", err)
		return
	}
	deleted, err := readPodDeletions(ru.r.Cluster.AuditLog, ru.ns, ru.start)
	if err != nil {
		violate("reading the audit log: %v", err)
		return
	}
	judged, violations := judgeGangs(gangs, groupOf, binds, bindings, deleted)
	rep.GangCycles = judged
	for _, v := range violations {
		violate("%s", v)
	}
}
