package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// attemptsMetric counts scheduling attempts by result (scheduled,
// unschedulable, error) in kube-scheduler and in every chapter, which
// registers the same metric.
const attemptsMetric = "scheduler_schedule_attempts_total"

// scrapeAttempts reads a scheduler's /metrics and returns the attempts it
// made, summed over results and profiles. Chapters serve plain HTTP;
// kube-scheduler serves HTTPS with a self-signed certificate, and answers
// /metrics anonymously only with --authorization-always-allow-paths.
func scrapeAttempts(ctx context.Context, addr string, https bool) (int, error) {
	url := "http://" + addr + "/metrics"
	client := &http.Client{Timeout: 10 * time.Second}
	if https {
		url = "https://" + addr + "/metrics"
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // a local process we started
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return sumCounter(resp.Body, attemptsMetric)
}

// sumCounter sums every sample of a counter in Prometheus' text format. A
// counter absent from the page is an error: a scheduler that made no
// attempt still registers it, so absence means the wrong endpoint.
func sumCounter(r io.Reader, name string) (int, error) {
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
			rest = rest[i+1:]
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
