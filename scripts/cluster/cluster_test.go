package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// toolsDir finds the tools `make tools` builds (TestTools).
func toolsDir(t *testing.T) string {
	t.Helper()
	dir, err := TestTools(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStartKWOKNodesAndPods starts the local cluster and checks what the
// scripts rely on: a fake node turns Ready, a pod bound to it turns Running,
// the audit log records the Binding, and Stop leaves the processes gone.
func TestStartKWOKNodesAndPods(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{ToolsDir: toolsDir(t), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()
	client := kubernetes.NewForConfigOrDie(c.Config)
	res := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourcePods: resource.MustParse("10")}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "fake-0", Annotations: map[string]string{FakeNodeAnnotation: FakeNodeAnnotationValue}},
		Status:     v1.NodeStatus{Allocatable: res, Capacity: res},
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "x"}}},
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: v1.ObjectReference{Kind: "Node", Name: "fake-0"}}
	if err := client.CoreV1().Pods("default").Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := client.CoreV1().Nodes().Get(ctx, "fake-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ready(n) && p.Status.Phase == v1.PodRunning {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node ready %v, pod phase %s", ready(n), p.Status.Phase)
		case <-time.After(100 * time.Millisecond):
		}
	}
	audit, err := os.ReadFile(c.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	if !containsAll(string(audit), `"subresource":"binding"`, `"resource":"nodes"`) {
		t.Errorf("the audit log lacks the binding or the node:\n%s", audit)
	}
	kwok := c.kwok.Process
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if err := kwok.Signal(syscall.Signal(0)); err == nil {
		t.Error("kwok still runs after Stop")
	}
}

func ready(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestRestartAPIServer checks what the chaos run needs of a restart: a
// client built from the kubeconfig written at start still works afterwards
// (same port, serving certificate and client CA), the data in etcd is still
// there, and the audit log goes on in the same file.
func TestRestartAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{ToolsDir: toolsDir(t), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop() }()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	node := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.RestartAPIServer(time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Get(ctx, "before", metav1.GetOptions{}); err != nil {
		t.Fatalf("after the restart, with the kubeconfig written at start: %v", err)
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node("after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	audit, err := os.ReadFile(c.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	if !containsAll(string(audit), `"name":"before"`, `"name":"after"`) {
		t.Errorf("the audit log lacks a node created before or after the restart:\n%s", audit)
	}
}
