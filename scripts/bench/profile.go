package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"minisched/scripts/e2e"
)

// profileHook is compiled into a chapter's main package by BuildProfiled,
// through go build -overlay, so the chapter's own files stay untouched. It
// does nothing unless MINISCHED_CPUPROFILE names a file: then the first
// SIGUSR1 starts a CPU profile and the second writes it out, to a
// temporary name first, so the file appears only once it is complete.
const profileHook = `package main

// This file is not part of the chapter: make bench adds it to a build of
// its own (go build -overlay) to profile the measured phase.

import (
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func init() {
	path := os.Getenv("MINISCHED_CPUPROFILE")
	if path == "" {
		return
	}
	toggle := make(chan os.Signal, 2)
	signal.Notify(toggle, syscall.SIGUSR1)
	go func() {
		<-toggle
		f, err := os.Create(path + ".tmp")
		if err != nil || pprof.StartCPUProfile(f) != nil {
			return
		}
		<-toggle
		pprof.StopCPUProfile()
		if f.Close() == nil {
			os.Rename(path+".tmp", path)
		}
	}()
}
`

// BuildProfiled builds a chapter with the profiling hook added, with the
// race detector or without it.
func BuildProfiled(root string, c e2e.Chapter, binDir string, race bool) (string, error) {
	dir, err := filepath.Abs(filepath.Join(root, c.Dir))
	if err != nil {
		return "", err
	}
	hook := filepath.Join(binDir, "zz_cpuprofile.go")
	if err := os.WriteFile(hook, []byte(profileHook), 0o644); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(dir, "zz_cpuprofile.go"): hook}})
	if err != nil {
		return "", err
	}
	overlayFile := filepath.Join(binDir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return "", err
	}
	bin, err := filepath.Abs(filepath.Join(binDir, c.Dir+"-profiled"))
	if err != nil {
		return "", err
	}
	args := []string{"build", "-overlay", overlayFile, "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s with the profiling hook: %v\n%s", c.Dir, err, out)
	}
	return bin, nil
}

// ProfiledScheduler runs a BuildProfiled binary with its profile going to
// path (env execs the binary, so the process is the scheduler itself).
func ProfiledScheduler(c e2e.Chapter, bin, path string) e2e.Scheduler {
	return e2e.Scheduler{Chapter: c.Number, Label: c.Dir + " (profiled)", Command: []string{"env", "MINISCHED_CPUPROFILE=" + path, bin}}
}

// TopFunctions is pprof's -top -cum of a profile: the functions under which
// the most CPU was spent, what they called included, so the scheduler's own
// steps show among the runtime's.
func TopFunctions(bin, profile string, n int) ([]byte, error) {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-cum", fmt.Sprintf("-nodecount=%d", n), bin, profile).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof: %v\n%s", err, out)
	}
	return out, nil
}

// toggleProfile sends the profiling hook its signal.
func toggleProfile(proc *e2e.Process) error {
	return syscall.Kill(proc.Pid(), syscall.SIGUSR1)
}

// profileWindow profiles a scheduler for the first Env.ProfileWindow of a
// measured phase, for make bench's --profile-window: a chapter built with
// the hook (t.Profile set) by its signal, kube-scheduler from its
// /debug/pprof/profile. The window is the same for both, so the two
// profiles weigh the same work. It returns a function that waits for the
// profile and says where it is: beside the run's log, named after it.
func (e *Env) profileWindow(ctx context.Context, t Target, proc *e2e.Process, ns string) func() (string, error) {
	if e.ProfileWindow <= 0 {
		return func() (string, error) { return "", nil }
	}
	path := filepath.Join(e.LogDir, ns+".cpu.pprof")
	done := make(chan error, 1)
	switch {
	case t.Sched.IsKubeScheduler():
		go func() { done <- fetchProfile(ctx, proc.Addr(), e.ProfileWindow, path) }()
	case t.Profile != "":
		if err := toggleProfile(proc); err != nil {
			done <- err
			break
		}
		go func() {
			select {
			case <-ctx.Done():
				done <- ctx.Err()
				return
			case <-time.After(e.ProfileWindow):
			}
			if err := toggleProfile(proc); err != nil {
				done <- err
				return
			}
			if err := waitFor(ctx, 30*time.Second, func() bool { _, err := os.Stat(t.Profile); return err == nil }); err != nil {
				done <- fmt.Errorf("no CPU profile at %s: %w", t.Profile, err)
				return
			}
			done <- os.Rename(t.Profile, path)
		}()
	default:
		done <- fmt.Errorf("%s was not built with the profiling hook", t.Name)
	}
	return func() (string, error) {
		if err := <-done; err != nil {
			return "", fmt.Errorf("profiling %s: %w", t.Name, err)
		}
		return path, nil
	}
}

// fetchProfile reads kube-scheduler's CPU profile of the next d from its
// secure port (a self-signed certificate; the harness allows
// /debug/pprof/* without authorization) into path.
func fetchProfile(ctx context.Context, addr string, d time.Duration, path string) error {
	url := fmt.Sprintf("https://%s/debug/pprof/profile?seconds=%d", addr, int(d.Round(time.Second)/time.Second))
	client := &http.Client{Timeout: d + 30*time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // a local process we started
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
