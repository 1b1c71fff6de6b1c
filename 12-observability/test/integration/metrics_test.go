package integration

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2/ktesting"

	"minisched/12-observability/internal/tracetest"
)

// TestCommandMetricsAndTrace runs the binary against a real apiserver with
// --trace-file, schedules two pods that fit and one that fits nowhere,
// and reads /metrics as a Prometheus server would: upstream's metrics, by
// their names and labels, count what happened. After SIGINT the trace
// file holds one task per attempt, each naming its pod.
func TestCommandMetricsAndTrace(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	bin := buildCommand(t)
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)
	const ns = "metrics"
	createNamespace(ctx, t, admin, ns)
	createNodes(ctx, t, admin, "node-a")

	addr := freeAddress(t)
	traceFile := filepath.Join(t.TempDir(), "run.trace")
	cmd := exec.Command(bin, "--kubeconfig="+writeKubeconfig(t, cfg), "--metrics-bind-address="+addr, "--trace-file="+traceFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()

	for _, p := range []string{"fits-1", "fits-2"} {
		createPod(ctx, t, admin, requesting(pod(ns, p, "mini-scheduler"), "1"))
	}
	createPod(ctx, t, admin, requesting(pod(ns, "too-big", "mini-scheduler"), "64"))
	waitFor(ctx, t, "two pods bound", func() (bool, error) {
		got, err := placements(ctx, admin, ns)
		return got["fits-1"] != "" && got["fits-2"] != "", err
	})
	waitUnschedulable(ctx, t, admin, ns, "too-big", "")

	var families map[string]*dto.MetricFamily
	waitFor(ctx, t, "/metrics to count the three attempts", func() (bool, error) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, err
		}
		families, err = testutil.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			return false, err
		}
		return value(families, "scheduler_schedule_attempts_total", map[string]string{"result": "unschedulable"}) >= 1 &&
			value(families, "scheduler_schedule_attempts_total", map[string]string{"result": "scheduled"}) == 2, nil
	})
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	got := map[string]float64{
		"attempt durations, scheduled":     value(families, "scheduler_scheduling_attempt_duration_seconds", with("result", "scheduled")),
		"Bind extension point, Success":    value(families, "scheduler_framework_extension_point_duration_seconds", with("extension_point", "Bind", "status", "Success")),
		"attempts to schedule, per pod":    value(families, "scheduler_pod_scheduling_attempts", nil),
		"SLI, pods bound at the first try": value(families, "scheduler_pod_scheduling_sli_duration_seconds", with("attempts", "1")),
		"pending, unschedulable":           value(families, "scheduler_pending_pods", with("queue", "unschedulable")),
		"held back by NodeResourcesFit":    value(families, "scheduler_unschedulable_pods", with("plugin", "NodeResourcesFit")),
		"queued entities, unschedulable":   value(families, "scheduler_queued_entities", with("queue", "unschedulable", "type", "pod")),
	}
	want := map[string]float64{
		"attempt durations, scheduled":     2,
		"Bind extension point, Success":    2,
		"attempts to schedule, per pod":    2,
		"SLI, pods bound at the first try": 2,
		"pending, unschedulable":           1,
		"held back by NodeResourcesFit":    1,
		"queued entities, unschedulable":   1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/metrics (-want, +got):\n%s", diff)
	}
	for _, name := range []string{"scheduler_preemption_attempts_total", "scheduler_scheduling_algorithm_duration_seconds", "scheduler_plugin_evaluation_total", "scheduler_queue_incoming_pods_total", "scheduler_event_handling_duration_seconds"} {
		if value(families, name, nil) < 1 {
			t.Errorf("%s counts nothing", name)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("after SIGINT: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after SIGINT; stderr:\n%s", stderr.String())
	}
	pods := tracedPods(t, traceFile)
	for _, p := range []string{ns + "/fits-1", ns + "/fits-2", ns + "/too-big"} {
		if pods[p] < 1 {
			t.Errorf("no schedulingAttempt task for %s in the trace; tasks per pod: %v", p, pods)
		}
	}
}

// value sums the samples of a family whose labels include labels: a
// counter's or gauge's value, a histogram's count.
func value(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f, ok := families[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, m := range f.GetMetric() {
		if !testutil.LabelsMatch(m, labels) {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// tracedPods counts, per pod, the schedulingAttempt tasks of an execution
// trace file, by the pod each task's first log names.
func tracedPods(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tracetest.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]int{}
	for _, task := range tracetest.OfType(tasks, "schedulingAttempt") {
		if len(task.Logs) > 0 && strings.HasPrefix(task.Logs[0], "pod: ") {
			pods[strings.TrimPrefix(task.Logs[0], "pod: ")]++
		}
	}
	if len(pods) == 0 {
		t.Errorf("the trace names no pod in its %d tasks", len(tasks))
	}
	return pods
}
