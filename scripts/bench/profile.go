package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

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
