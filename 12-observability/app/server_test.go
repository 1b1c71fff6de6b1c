package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeKubeconfig writes a kubeconfig whose only cluster is at server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	content := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ` + server + `
users:
- name: u
  user:
    token: t
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunRejectsBadInput checks that each kind of bad input ends Run with an
// error that starts as the user should read it, and fits on one line.
func TestRunRejectsBadInput(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte("{{{ not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantPrefix string
	}{
		{name: "unknown flag", args: []string{"--no-such-flag"}, wantPrefix: "unknown flag: --no-such-flag (see --help)"},
		{name: "flag without value", args: []string{"--kube-api-qps"}, wantPrefix: "flag needs an argument: --kube-api-qps"},
		{name: "flag with a bad value", args: []string{"--kube-api-burst=many"}, wantPrefix: `invalid argument "many" for "--kube-api-burst"`},
		{name: "stray argument", args: []string{"extra"}, wantPrefix: `unexpected argument "extra"`},
		{name: "zero qps", args: []string{"--kube-api-qps=0"}, wantPrefix: "--kube-api-qps must be positive"},
		{name: "empty scheduler name", args: []string{"--scheduler-name="}, wantPrefix: "--scheduler-name must not be empty"},
		{name: "bad bind address", args: []string{"--metrics-bind-address=nowhere"}, wantPrefix: `--metrics-bind-address "nowhere"`},
		{name: "zero flush duration", args: []string{"--pod-max-in-unschedulable-pods-duration=0s"}, wantPrefix: "--pod-max-in-unschedulable-pods-duration must be positive"},
		{name: "flush duration without unit", args: []string{"--pod-max-in-unschedulable-pods-duration=5"}, wantPrefix: `invalid argument "5" for "--pod-max-in-unschedulable-pods-duration"`},
		{name: "zero initial backoff", args: []string{"--pod-initial-backoff-duration=0s"}, wantPrefix: "--pod-initial-backoff-duration must be positive, got 0s"},
		{name: "max backoff below initial", args: []string{"--pod-initial-backoff-duration=2s", "--pod-max-backoff-duration=1s"}, wantPrefix: "--pod-max-backoff-duration must be at least --pod-initial-backoff-duration (2s), got 1s"},
		{name: "backoff without unit", args: []string{"--pod-max-backoff-duration=10"}, wantPrefix: `invalid argument "10" for "--pod-max-backoff-duration"`},
		{name: "percentage above 100", args: []string{"--percentage-of-nodes-to-score=101"}, wantPrefix: "--percentage-of-nodes-to-score must be in the range [0, 100], got 101"},
		{name: "negative percentage", args: []string{"--percentage-of-nodes-to-score=-1"}, wantPrefix: "--percentage-of-nodes-to-score must be in the range [0, 100], got -1"},
		{name: "zero parallelism", args: []string{"--parallelism=0"}, wantPrefix: "--parallelism must be positive, got 0"},
		{name: "zero samples", args: []string{"--power-of-two-choices", "--power-of-two-choices-d=0"}, wantPrefix: "--power-of-two-choices-d must be positive, got 0"},
		{name: "unknown scoring strategy", args: []string{"--scoring-strategy=Random"}, wantPrefix: `--scoring-strategy must be LeastAllocated or MostAllocated, got "Random"`},
		{name: "trace file in no directory", args: []string{"--trace-file=/does/not/exist/run.trace"}, wantPrefix: `--trace-file "/does/not/exist/run.trace": no directory /does/not/exist`},
		{name: "missing kubeconfig", args: []string{"--kubeconfig=/does/not/exist"}, wantPrefix: "loading kubeconfig:"},
		{name: "kubeconfig that is not yaml", args: []string{"--kubeconfig=" + garbage}, wantPrefix: "loading kubeconfig:"},
		{
			name:       "no kubeconfig outside a cluster",
			env:        map[string]string{"KUBECONFIG": "", "KUBERNETES_SERVICE_HOST": "", "KUBERNETES_SERVICE_PORT": ""},
			wantPrefix: "no kubeconfig: pass --kubeconfig or set KUBECONFIG",
		},
		{
			// Port 1 on loopback: nothing listens there, so the dial is
			// refused at once.
			name:       "unreachable apiserver",
			args:       []string{"--kubeconfig=" + writeKubeconfig(t, "https://127.0.0.1:1")},
			wantPrefix: "cannot reach the apiserver at https://127.0.0.1:1:",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			err := Run(context.Background(), tt.args, &bytes.Buffer{})
			if err == nil {
				t.Fatal("Run returned no error")
			}
			got := err.Error()
			if strings.Contains(got, "\n") {
				t.Errorf("error spans several lines: %q", got)
			}
			if !strings.HasPrefix(got, tt.wantPrefix) {
				t.Errorf("error = %q, want it to start with %q", got, tt.wantPrefix)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"--help"}, &out); err != nil {
		t.Fatalf("--help: %v", err)
	}
	var missing []string
	for _, flag := range []string{"--kubeconfig", "--scheduler-name", "--kube-api-qps", "--kube-api-burst", "--metrics-bind-address", "--pod-max-in-unschedulable-pods-duration", "--pod-initial-backoff-duration", "--pod-max-backoff-duration", "--percentage-of-nodes-to-score", "--parallelism", "--power-of-two-choices", "--power-of-two-choices-d", "--scoring-strategy", "-v, --v"} {
		if !strings.Contains(out.String(), flag) {
			missing = append(missing, flag)
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("flags missing from --help (-want, +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	want := &Options{SchedulerName: "mini-scheduler", KubeAPIQPS: 50, KubeAPIBurst: 100, MetricsBindAddress: "127.0.0.1:10251", PodMaxInUnschedulablePodsDuration: 5 * time.Minute,
		PodInitialBackoffDuration: time.Second, PodMaxBackoffDuration: 10 * time.Second, Parallelism: 16, PowerOfTwoChoicesD: 2, ScoringStrategy: "LeastAllocated"}
	if diff := cmp.Diff(want, NewOptions()); diff != "" {
		t.Errorf("defaults (-want, +got):\n%s", diff)
	}
}
