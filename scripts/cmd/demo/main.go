// Command demo runs one chapter's scheduler on a fresh local cluster: it
// creates a few fake nodes and a dozen pods, prints a table of pod, node and
// phase that updates as the pods go Running, and then keeps the cluster up
// for kubectl until Ctrl-C. With --once it exits 0 when every pod runs, or
// non-zero when they do not within the timeout.
//
// From the chapter that schedules pod groups on, it adds a gang: a PodGroup
// with minCount 4 whose fourth member comes a few seconds after the other
// three, so the table shows three members pending, then all four bound
// together.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"minisched/scripts/cluster"
	"minisched/scripts/e2e"
)

const namespace = "demo"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	chapterFlag := flag.String("chapter", "", "chapter number, e.g. 01")
	tools := flag.String("tools", ".cache/tools", "tools directory")
	once := flag.Bool("once", false, "exit once every pod runs")
	timeout := flag.Duration("timeout", 2*time.Minute, "with --once, how long to wait for the pods")
	config := flag.String("config", e2e.DefaultPluginsConfig, "chapter 13 only: NAME of its config/NAME.yaml (it ships "+strings.Join(e2e.PluginsConfigs, ", ")+")")
	flag.Parse()

	all, err := e2e.FindChapters(".")
	if err != nil {
		return err
	}
	chosen, err := e2e.SelectChapters(all, *chapterFlag)
	if err != nil {
		return err
	}
	if len(chosen) != 1 {
		return fmt.Errorf("--chapter must name one chapter, e.g. --chapter 01")
	}
	ch := chosen[0]

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := filepath.Abs(filepath.Join(".cache", "demo"))
	if err != nil {
		return err
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fmt.Printf("Building %s ...\n", ch.Dir)
	bin := filepath.Join(dir, ch.Dir)
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ch.Dir
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", ch.Dir, err, out)
	}

	fmt.Println("Starting etcd, kube-apiserver and kwok on 127.0.0.1 ...")
	cl, err := cluster.Start(ctx, cluster.Options{ToolsDir: *tools, Dir: filepath.Join(dir, "cluster")})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Stopping the cluster.")
		if err := cl.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stopping the cluster:", err)
		}
	}()
	client := kubernetes.NewForConfigOrDie(cl.Config)
	if err := createDemo(ctx, client); err != nil {
		return err
	}
	gang := ch.Number >= e2e.PodGroupChapter
	if gang {
		if err := createGang(ctx, client, gangMembers-1); err != nil {
			return err
		}
	}

	logPath := filepath.Join(dir, "scheduler.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	args := []string{"--kubeconfig=" + cl.Kubeconfig, "--metrics-bind-address=127.0.0.1:0", "-v=2"}
	if ch.Number == e2e.PluginsChapter {
		// kube-scheduler's command line: the configuration says where the
		// apiserver is (kube-scheduler ignores --kubeconfig with --config).
		cfg := filepath.Join(dir, fmt.Sprintf("%s-%s.yaml", ch.Dir, *config))
		if err := e2e.WritePluginsConfig(".", *config, cl.Kubeconfig, cfg, e2e.ChapterClient); err != nil {
			return err
		}
		args = []string{"--config=" + cfg, "--secure-port=0", "-v=2", "--feature-gates=GenericWorkload=true"}
		fmt.Printf("Running kube-scheduler v1.37.1 with the chapter's plugins: go run ./%s %s\n", ch.Dir, strings.Join(args, " "))
	}
	sched := exec.Command(bin, args...)
	sched.Stdout, sched.Stderr = logFile, logFile
	if err := sched.Start(); err != nil {
		return err
	}
	schedDone := make(chan error, 1)
	go func() { schedDone <- sched.Wait() }()
	defer func() {
		_ = sched.Process.Signal(syscall.SIGTERM)
		select {
		case <-schedDone:
		case <-time.After(10 * time.Second):
			_ = sched.Process.Kill()
		}
	}()
	fmt.Printf("Started %s (log: %s)\n\n", ch.Dir, logPath)
	if gang {
		// The last member comes later: until then the gang is short of
		// minCount, and its three members wait in the queue.
		go func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(lastMemberDelay):
			}
			if err := createGangMember(ctx, client, gangMembers-1); err != nil {
				fmt.Fprintln(os.Stderr, "demo: creating the last member of the gang:", err)
			}
		}()
	}

	finished, err := watchTable(ctx, client, *timeout, schedDone, gang)
	if err != nil {
		return err
	}
	var metricsAddr string
	if ch.Number == e2e.ObservabilityChapter && finished {
		if metricsAddr, err = printMetrics(ctx, logPath); err != nil {
			return err
		}
	}
	if *once {
		if !finished {
			return fmt.Errorf("not every pod was Running within %s; see %s", *timeout, logPath)
		}
		return nil
	}
	fmt.Printf("\nThe cluster stays up. In another terminal:\n\n  export KUBECONFIG=%s\n  %s get pods -n %s -o wide\n",
		cl.Kubeconfig, filepath.Join(*tools, "bin", "kubectl"), namespace)
	if metricsAddr != "" {
		fmt.Printf("  curl -s http://%s/metrics | grep '^scheduler_'\n", metricsAddr)
	}
	fmt.Printf("\nCtrl-C stops the scheduler and the cluster.\n")
	select {
	case <-ctx.Done():
	case err := <-schedDone:
		return fmt.Errorf("the scheduler exited: %v; see %s", err, logPath)
	}
	return nil
}

// createDemo makes four fake nodes and a dozen pods of mixed sizes.
func createDemo(ctx context.Context, client kubernetes.Interface) error {
	if _, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for i := range 4 {
		res := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110")}
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        fmt.Sprintf("kwok-node-%d", i),
				Annotations: map[string]string{cluster.FakeNodeAnnotation: cluster.FakeNodeAnnotationValue},
				Labels:      map[string]string{v1.LabelHostname: fmt.Sprintf("kwok-node-%d", i)},
			},
			Status: v1.NodeStatus{Allocatable: res, Capacity: res.DeepCopy()},
		}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	sizes := []string{"100m", "250m", "500m"}
	for i := range 12 {
		pod := demoPod(fmt.Sprintf("demo-%02d", i), sizes[i%len(sizes)])
		if _, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// demoPod is a pause pod for the chapter's scheduler that requests cpu.
func demoPod(name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			SchedulerName: e2e.DefaultSchedulerName,
			Containers: []v1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("128Mi"),
				}},
			}},
		},
	}
}

// The gang of the pod-group chapters: a PodGroup of gangMembers pods, all of
// which must be placed (minCount), whose last member the demo creates
// lastMemberDelay after the others.
const (
	gangName        = "team"
	gangMembers     = 4
	lastMemberDelay = 3 * time.Second
)

// createGang makes the gang's PodGroup and its first members.
func createGang(ctx context.Context, client kubernetes.Interface, members int) error {
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: gangName},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: gangMembers},
		}},
	}
	if _, err := client.SchedulingV1beta1().PodGroups(namespace).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the PodGroup %s: %w", gangName, err)
	}
	for i := range members {
		if err := createGangMember(ctx, client, i); err != nil {
			return err
		}
	}
	return nil
}

func createGangMember(ctx context.Context, client kubernetes.Interface, i int) error {
	pod := demoPod(fmt.Sprintf("%s-%d", gangName, i), "1")
	group := gangName
	pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	_, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

// watchTable prints the pod table each time it changes, until every pod is
// Running (true), the timeout passes or the scheduler exits (false). With
// gang it also waits for the gang's last member, which comes later.
func watchTable(ctx context.Context, client kubernetes.Interface, timeout time.Duration, schedDone <-chan error, gang bool) (bool, error) {
	deadline := time.After(timeout)
	last := ""
	// On a terminal the table is redrawn in place; in a log, each new
	// version is printed below the last.
	info, _ := os.Stdout.Stat()
	tty := info != nil && info.Mode()&os.ModeCharDevice != 0
	for {
		pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		table, running := render(pods.Items, gang)
		if table != last {
			if tty && last != "" {
				fmt.Printf("\033[%dA\033[J", strings.Count(last, "\n")+1)
			}
			fmt.Println(table)
			last = table
		}
		if running == len(pods.Items) && (!gang || len(pods.Items) == 12+gangMembers) {
			fmt.Printf("All %d pods are Running.\n", running)
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-deadline:
			return false, nil
		case err := <-schedDone:
			return false, fmt.Errorf("the scheduler exited: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// render makes the table; with gang it has a column for the pod group.
func render(pods []v1.Pod, gang bool) (string, int) {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var b strings.Builder
	group := func(s string) string {
		if !gang {
			return ""
		}
		return fmt.Sprintf("%-8s ", s)
	}
	fmt.Fprintf(&b, "%-10s %s%-8s %-12s %s\n", "POD", group("GROUP"), "CPU", "NODE", "PHASE")
	running := 0
	for _, p := range pods {
		node := p.Spec.NodeName
		if node == "" {
			node = "-"
		}
		if p.Status.Phase == v1.PodRunning {
			running++
		}
		cpu := p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]
		pg := "-"
		if p.Spec.SchedulingGroup != nil && p.Spec.SchedulingGroup.PodGroupName != nil {
			pg = *p.Spec.SchedulingGroup.PodGroupName
		}
		fmt.Fprintf(&b, "%-10s %s%-8s %-12s %s\n", p.Name, group(pg), cpu.String(), node, p.Status.Phase)
	}
	fmt.Fprintf(&b, "%d/%d Running", running, len(pods))
	return b.String(), running
}

// demoMetrics are the series the demo prints from chapter 12's /metrics:
// the attempts by result, the pods' attempts and SLI, the pod group's
// attempts, and what the queue still holds.
var demoMetrics = []string{
	"scheduler_schedule_attempts_total{",
	"scheduler_pod_scheduling_attempts_count ",
	"scheduler_pod_scheduling_sli_duration_seconds_count{",
	"scheduler_podgroup_schedule_attempts_total{",
	"scheduler_pending_pods{",
}

// printMetrics reads the scheduler's address from its log (the line
// "Serving /healthz and /metrics") and prints a few series of its
// /metrics, those a dashboard would start with. It returns the address.
func printMetrics(ctx context.Context, logPath string) (string, error) {
	log, err := os.ReadFile(logPath)
	if err != nil {
		return "", err
	}
	m := servingLine.FindSubmatch(log)
	if m == nil {
		return "", fmt.Errorf("no %q line in %s", "Serving /healthz and /metrics", logPath)
	}
	addr := string(m[1])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("reading the scheduler's /metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("reading the scheduler's /metrics: %w", err)
	}
	fmt.Printf("\nA few of its metrics (http://%s/metrics):\n", addr)
	for _, line := range strings.Split(string(body), "\n") {
		for _, prefix := range demoMetrics {
			if strings.HasPrefix(line, prefix) {
				fmt.Println(line)
			}
		}
	}
	return addr, nil
}

// servingLine is the log line of the scheduler's HTTP server, with its
// address.
var servingLine = regexp.MustCompile(`"Serving /healthz and /metrics" address="([^"]+)"`)
