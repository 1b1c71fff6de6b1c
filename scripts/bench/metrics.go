package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"minisched/scripts/e2e"
)

// attemptsMetric counts scheduling attempts by result (scheduled,
// unschedulable, error) in kube-scheduler and in every chapter, which
// registers the same metric.
const attemptsMetric = "scheduler_schedule_attempts_total"

// scrapeAttempts reads a scheduler's /metrics (e2e.GetMetrics) and returns
// the attempts it made, summed over results and profiles. kube-scheduler
// answers /metrics anonymously only with --authorization-always-allow-paths,
// which the harness gives it.
func scrapeAttempts(ctx context.Context, addr string, kubeScheduler bool) (int, error) {
	page, err := e2e.GetMetrics(ctx, addr, kubeScheduler)
	if err != nil {
		return 0, err
	}
	return sumCounter(bytes.NewReader(page), attemptsMetric, "")
}

// scrapeScheduled reads the attempts whose result is scheduled: one per
// bound pod, counted once the binding cycle has returned. A pod's Binding
// is visible in the API before its scheduler counts it, so the requeue
// workload waits for this to reach its pods before it reads the attempts.
func scrapeScheduled(ctx context.Context, addr string, kubeScheduler bool) (int, error) {
	page, err := e2e.GetMetrics(ctx, addr, kubeScheduler)
	if err != nil {
		return 0, err
	}
	return sumCounter(bytes.NewReader(page), attemptsMetric, `result="scheduled"`)
}

// sumCounter sums every sample of a counter in Prometheus' text format
// whose labels hold label ("" for every sample). A counter absent from the
// page is an error: a scheduler that made no attempt still registers it,
// so absence means the wrong endpoint.
func sumCounter(r io.Reader, name, label string) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	total, found := 0.0, false
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		found = true
		if i := strings.LastIndexByte(rest, '}'); i >= 0 {
			if !strings.Contains(rest[:i], label) {
				continue
			}
			rest = rest[i+1:]
		} else if label != "" {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, fmt.Errorf("%s: no value in %q", name, line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		total += v
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("no %s on the metrics page", name)
	}
	return int(total), nil
}
