package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"minisched/scripts/cluster"
)

// TestUpDown drives the command as `make up` and `make down` do: up prints
// the export line last, a second up says the cluster runs, kubectl works
// with the kubeconfig, down stops every process and removes the state
// directory, and a second down says nothing runs.
func TestUpDown(t *testing.T) {
	tools, err := cluster.TestTools(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "cluster")
	if out, err := exec.Command("go", "build", "-race", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "state")
	run := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command(bin, append(args, "--dir", dir, "--tools", tools)...).Output()
		if err != nil {
			t.Fatalf("cluster %v: %v\n%s", args, err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	defer exec.Command(bin, "down", "--dir", dir).Run()

	exportLine := "export KUBECONFIG=" + filepath.Join(dir, "kubeconfig")
	up := run("up")
	env := []string{"export PATH=" + filepath.Join(tools, "bin") + ":$PATH", exportLine}
	if diff := cmp.Diff(env, up[len(up)-2:]); diff != "" {
		t.Errorf("last lines of up (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(env, run("env")); diff != "" {
		t.Errorf("env (-want, +got):\n%s", diff)
	}
	again := run("up")
	if !strings.HasPrefix(again[0], "The local cluster is already running") || again[len(again)-1] != exportLine {
		t.Errorf("second up printed %q", again)
	}
	kubectl := exec.Command(filepath.Join(tools, "bin", "kubectl"), "version", "-o", "yaml")
	kubectl.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"))
	out, err := kubectl.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "gitVersion: v1.37.1") {
		t.Errorf("kubectl version: %v\n%s", err, out)
	}

	// The pages' example manifests: the apiserver takes every one, and kwok
	// makes the fake nodes Ready.
	examples := filepath.Join("..", "..", "..", "docs", "examples")
	for _, args := range [][]string{
		{"apply", "-f", filepath.Join(examples, "nodes.yaml"), "-f", filepath.Join(examples, "tainted-node.yaml"), "-f", filepath.Join(examples, "priority-class.yaml"), "-f", filepath.Join(examples, "pod-too-big.yaml")},
		{"create", "-f", filepath.Join(examples, "pod.yaml"), "-f", filepath.Join(examples, "gang-member.yaml")},
		{"wait", "--for=condition=Ready", "node", "--all", "--timeout=60s"},
	} {
		cmd := exec.Command(filepath.Join(tools, "bin", "kubectl"), args...)
		cmd.Env = kubectl.Env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("kubectl %v: %v\n%s", args, err, out)
		}
	}
	// The pod of the class, as page 09 has the reader create it: retried
	// until the Priority admission plugin's informer has the class. The
	// deadline only bounds how long a failing test waits.
	deadline := time.Now().Add(30 * time.Second)
	for {
		cmd := exec.Command(filepath.Join(tools, "bin", "kubectl"), "apply", "-f", filepath.Join(examples, "priority.yaml"))
		cmd.Env = kubectl.Env
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("kubectl apply -f priority.yaml: %v\n%s", err, out)
			break
		}
		time.Sleep(time.Second)
	}

	// Every process up started: the serve process and its children.
	var pids []int
	for _, f := range []string{"serve.pid", "pids"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	if len(pids) < 4 {
		t.Errorf("want the serve process, etcd, kube-apiserver and kwok recorded, got pids %v", pids)
	}
	down := run("down")
	if !strings.HasPrefix(down[0], "The local cluster is stopped") {
		t.Errorf("down printed %q", down)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d still runs after down", pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after down (%v)", dir, err)
	}
	if diff := cmp.Diff([]string{"No local cluster is running; nothing to stop."}, run("down")); diff != "" {
		t.Errorf("second down (-want, +got):\n%s", diff)
	}
}
