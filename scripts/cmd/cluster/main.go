// Command cluster runs minisched's local cluster in the background:
//
//	cluster up     start it (etcd, kube-apiserver, kwok on 127.0.0.1) and
//	               print `export KUBECONFIG=...` as the last line
//	cluster down   stop everything `up` started and remove its files
//	cluster status say whether it runs
//	cluster env    print the exports for the built kubectl and the cluster
//
// `up` starts this same program as `cluster serve` in a new session, which
// holds the cluster until `down` sends it SIGTERM. The state directory holds
// the serve process's pid, the kubeconfig, the logs, and the temporary
// directories of etcd and kube-apiserver, so `down` leaves nothing behind
// even when a process died without cleaning up.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"minisched/scripts/cluster"
)

func main() {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	dir := fs.String("dir", ".cache/cluster", "state directory")
	tools := fs.String("tools", ".cache/tools", "tools directory (see scripts/build-tools.sh)")
	if len(os.Args) < 2 {
		fail(errors.New("usage: cluster up|down|status|env|serve [--dir DIR] [--tools DIR]"))
	}
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	absDir, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	absTools, err := filepath.Abs(*tools)
	if err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case "up":
		err = up(absDir, absTools)
	case "down":
		err = down(absDir)
	case "status":
		err = status(absDir)
	case "env":
		printEnv(absDir, absTools)
	case "serve":
		err = serve(absDir, absTools)
	default:
		err = fmt.Errorf("unknown command %q: want up, down, status, env or serve", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cluster: "+err.Error())
	os.Exit(1)
}

func pidFile(dir string) string   { return filepath.Join(dir, "serve.pid") }
func readyFile(dir string) string { return filepath.Join(dir, "ready") }
func kubeconfig(dir string) string {
	return filepath.Join(dir, "kubeconfig")
}

// running returns the pid of the serve process if it is alive.
func running(dir string) (int, bool) {
	b, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, syscall.Kill(pid, 0) == nil
}

func up(dir, tools string) error {
	if pid, ok := running(dir); ok {
		fmt.Printf("The local cluster is already running (pid %d). `make down` stops it.\n", pid)
		printEnv(dir, tools)
		return nil
	}
	// Leftovers of a cluster that died: clean them first.
	if err := cleanup(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "cluster.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve", "--dir", dir, "--tools", tools)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// etcd and kube-apiserver put their data and certificates in TMPDIR.
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(dir, "tmp"))
	// A new session: the cluster outlives this command and the terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fmt.Fprintln(os.Stderr, "Starting etcd, kube-apiserver and kwok on 127.0.0.1 ...")
	deadline := time.After(90 * time.Second)
	for {
		select {
		case err := <-exited:
			tail, _ := os.ReadFile(logPath)
			return fmt.Errorf("the cluster did not start (%v):\n%s", err, lastLines(string(tail), 15))
		case <-deadline:
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
			return fmt.Errorf("the cluster did not start within 90s; see %s", logPath)
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := os.Stat(readyFile(dir)); err == nil {
			break
		}
	}
	fmt.Printf("The local cluster is up: etcd, kube-apiserver and kwok (pid %d). Logs: %s\n", cmd.Process.Pid, dir)
	fmt.Println("Point your shell at it (or run: eval \"$(make -s env)\"):")
	printEnv(dir, tools)
	return nil
}

// printEnv prints the two exports a reader needs: the built kubectl first
// on PATH (v1.37.1, the cluster's version; another kubectl may be older or
// missing), and the cluster's kubeconfig, last, where scripts look for it.
func printEnv(dir, tools string) {
	fmt.Printf("export PATH=%s:$PATH\n", filepath.Join(tools, "bin"))
	fmt.Printf("export KUBECONFIG=%s\n", kubeconfig(dir))
}

func down(dir string) error {
	pid, ok := running(dir)
	if !ok {
		if _, err := os.Stat(dir); err == nil {
			if err := cleanup(dir); err != nil {
				return err
			}
		}
		fmt.Println("No local cluster is running; nothing to stop.")
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for range 600 {
		if syscall.Kill(pid, 0) != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cleanup(dir); err != nil {
		return err
	}
	fmt.Printf("The local cluster is stopped (pid %d) and %s is removed.\n", pid, dir)
	return nil
}

// cleanup kills whatever the state directory says still runs (the serve
// process, and the etcd, kube-apiserver and kwok it recorded) and removes the
// directory.
func cleanup(dir string) error {
	b, _ := os.ReadFile(filepath.Join(dir, "pids"))
	pids := strings.Fields(string(b))
	if p, err := os.ReadFile(pidFile(dir)); err == nil {
		pids = append(pids, strings.TrimSpace(string(p)))
	}
	for _, s := range pids {
		if pid, err := strconv.Atoi(s); err == nil && pid > 0 && syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return os.RemoveAll(dir)
}

func status(dir string) error {
	if pid, ok := running(dir); ok {
		fmt.Printf("The local cluster is running (pid %d).\nexport KUBECONFIG=%s\n", pid, kubeconfig(dir))
		return nil
	}
	fmt.Println("No local cluster is running.")
	return nil
}

// serve runs the cluster in the foreground until SIGTERM or SIGINT.
func serve(dir, tools string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.WriteFile(pidFile(dir), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	c, err := cluster.Start(ctx, cluster.Options{ToolsDir: tools, Dir: dir})
	if err != nil {
		return err
	}
	// Record the children, so `down` can kill them should this process die
	// without stopping them.
	_ = os.WriteFile(filepath.Join(dir, "pids"), []byte(strings.Join(children(os.Getpid()), "\n")), 0o644)
	if err := os.WriteFile(readyFile(dir), nil, 0o644); err != nil {
		_ = c.Stop()
		return err
	}
	fmt.Println("cluster ready; kubeconfig:", c.Kubeconfig)
	<-ctx.Done()
	fmt.Println("stopping the cluster")
	return c.Stop()
}

// children lists the pids of a process's children: from /proc on Linux,
// from pgrep elsewhere (macOS has it).
func children(pid int) []string {
	var out []string
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut after ")".
		_, rest, ok := strings.Cut(string(b), ") ")
		if f := strings.Fields(rest); ok && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, filepath.Base(filepath.Dir(st)))
		}
	}
	if len(stats) == 0 {
		if b, err := exec.Command("pgrep", "-P", strconv.Itoa(pid)).Output(); err == nil {
			out = strings.Fields(string(b))
		}
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
