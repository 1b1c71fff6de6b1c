package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2/ktesting"
)

// buildCommand builds this chapter's binary, with the race detector, so the
// tests below run the program exactly as a user does. It goes where make
// e2e builds it (.cache/bin/race/ at the repository's root): go build
// relinks it only when the chapter changed, once for both tests and the
// scenarios.
func buildCommand(t *testing.T) string {
	t.Helper()
	chapter, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(chapter), ".cache", "bin", "race", filepath.Base(chapter))
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", bin, "-race", ".")
	cmd.Dir = chapter
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The test runs its own name for the file, as make e2e does: a build
	// meanwhile replaces the cached file, not this one.
	own := filepath.Join(t.TempDir(), "mini-scheduler")
	if err := os.Link(bin, own); err != nil {
		return bin
	}
	return own
}

// writeKubeconfig writes cfg as a kubeconfig file.
func writeKubeconfig(t *testing.T, cfg *restclient.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestCommandRejectsBadInput: bad flags, a missing kubeconfig and an
// unreachable apiserver each print one line on stderr and exit non-zero.
func TestCommandRejectsBadInput(t *testing.T) {
	bin := buildCommand(t)
	unreachable := writeKubeconfig(t, &restclient.Config{Host: "https://127.0.0.1:1"})
	tests := []struct {
		name       string
		args       []string
		wantPrefix string
	}{
		{"bad flag", []string{"--bogus"}, "mini-scheduler: unknown flag: --bogus"},
		{"bad value", []string{"--kube-api-qps=fast"}, `mini-scheduler: invalid argument "fast"`},
		{"missing kubeconfig", []string{"--kubeconfig=/nope"}, "mini-scheduler: loading kubeconfig:"},
		{"unreachable apiserver", []string{"--kubeconfig=" + unreachable}, "mini-scheduler: cannot reach the apiserver at https://127.0.0.1:1"},
		{"trace file in no directory", []string{"--kubeconfig=" + unreachable, "--trace-file=/nope/run.trace"}, `mini-scheduler: --trace-file "/nope/run.trace": no directory /nope`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("want a non-zero exit, got %v", err)
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], tt.wantPrefix) {
				t.Errorf("stderr = %q, want one line starting %q", stderr.String(), tt.wantPrefix)
			}
		})
	}
}

// TestCommandServesAndStopsOnSIGINT runs the binary against a real
// apiserver: it binds a pod, /healthz answers, /metrics counts the attempt,
// and SIGINT makes it exit 0.
func TestCommandServesAndStopsOnSIGINT(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	bin := buildCommand(t)
	cfg := startAPIServer(t)
	admin := kubernetes.NewForConfigOrDie(cfg)
	createNodes(ctx, t, admin, "node-a")

	addr := freeAddress(t)
	cmd := exec.Command(bin, "--kubeconfig="+writeKubeconfig(t, cfg), "--metrics-bind-address="+addr)
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

	if _, err := admin.CoreV1().Pods("default").Create(ctx, pod("default", "p", "mini-scheduler"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func(path string) (string, error) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: %s", path, resp.Status)
		}
		return string(body), err
	}
	waitFor(ctx, t, "/healthz to answer ok", func() (bool, error) {
		body, err := get("/healthz")
		return body == "ok", err
	})
	waitFor(ctx, t, "the pod to be bound and counted in /metrics", func() (bool, error) {
		body, err := get("/metrics")
		return strings.Contains(body, `scheduler_schedule_attempts_total{profile="mini-scheduler",result="scheduled"} 1`), err
	})

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGINT: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after SIGINT; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "Shutting down") {
		t.Errorf("no clean shutdown in the log:\n%s", stderr.String())
	}
}
