package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// GetMetrics reads a scheduler's /metrics page at addr: a chapter's over
// HTTP, kube-scheduler's (upstream's or chapter 13's) over HTTPS with its
// self-signed certificate, which is not checked: the address is on
// 127.0.0.1 and the harness started the process.
func GetMetrics(ctx context.Context, addr string, kubeScheduler bool) ([]byte, error) {
	url := "http://" + addr + "/metrics"
	client := &http.Client{Timeout: 10 * time.Second}
	if kubeScheduler {
		url = "https://" + addr + "/metrics"
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a local process we started
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}
