// Command watch serves a page that shows schedulers at work: their nodes,
// their queues, and every attempt of every pod with each plugin's verdict
// (make watch; docs/watch.md).
//
//	watch --chapter 08                 one chapter, on the local cluster
//	watch --chapter 08,10              two chapters side by side, each on a cluster of its own
//	watch --chapter 10 --vs upstream   chapter 10 beside kube-scheduler configured like it
//	watch --chapter 08 --record f      also record what the page shows
//	watch --replay f                   show a recording again, with a time slider
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"minisched/scripts/e2e"
	"minisched/scripts/watch"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "watch: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	// A flag set of its own: controller-runtime, which envtest brings in,
	// registers --kubeconfig on the global one.
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	chapters := fs.String("chapter", "", "chapters to watch, comma-separated (08 or 08,10)")
	vs := fs.String("vs", "", `"upstream" adds kube-scheduler v1.37.1 configured like the chapter`)
	tools := fs.String("tools", ".cache/tools", "tools directory")
	addr := fs.String("addr", "127.0.0.1:8765", "where to serve the page (127.0.0.1 only)")
	record := fs.String("record", "", "record what the page shows to this file")
	replay := fs.String("replay", "", "show a recording instead of a cluster")
	kubeconfig := fs.String("kubeconfig", "", "watch this cluster instead of the local one (one chapter only)")
	allowRemote := fs.Bool("allow-remote", false, "accept a kubeconfig whose apiserver is not on this machine")
	clusterBin := fs.String("cluster-bin", ".cache/bin/cluster", "the local cluster's command (make up)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := watch.CheckLoopback(*addr); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *replay != "" {
		if *chapters != "" || *record != "" || *vs != "" {
			return errors.New("--replay shows a recording: it takes no --chapter, --vs or --record")
		}
		return serveReplay(ctx, *replay, *addr)
	}
	all, err := e2e.FindChapters(".")
	if err != nil {
		return err
	}
	chosen, err := e2e.SelectChapters(all, *chapters)
	if err != nil {
		return err
	}
	if *chapters == "" || len(chosen) == 0 {
		return errors.New("--chapter names the chapters to watch, e.g. --chapter 08 or --chapter 08,10")
	}
	for _, c := range chosen {
		if c.Number < 2 {
			return fmt.Errorf("%s has no Filter plugins to watch: make watch starts at chapter 02", c.Dir)
		}
	}
	if *vs != "" && *vs != "upstream" {
		return fmt.Errorf("--vs %q: the only one is upstream", *vs)
	}
	if *vs == "upstream" && len(chosen) != 1 {
		return errors.New("--vs upstream goes with one chapter")
	}
	base, err := filepath.Abs(filepath.Join(".cache", "watch"))
	if err != nil {
		return err
	}
	// Each make watch keeps its clusters and logs in a folder of its own,
	// so that a second one leaves the first one's alone; the folders of
	// runs that have ended go.
	removeEnded(base)
	dir := filepath.Join(base, fmt.Sprintf("run-%d", os.Getpid()))
	binDir := filepath.Join(dir, "bin")
	var lanes []watch.LaneSpec
	for _, c := range chosen {
		fmt.Printf("Building %s ...\n", c.Dir)
		bin, err := e2e.BuildChapterWith(".", c, binDir, false)
		if err != nil {
			return err
		}
		if c.Number == e2e.PluginsChapter {
			// kube-scheduler with the chapter's plugins: kube-scheduler's
			// log lines, with its default configuration.
			s, err := e2e.PluginsScheduler(".", dir, bin, e2e.DefaultPluginsConfig, e2e.ChapterClient, append(slices.Clone(watch.UpstreamFlags), "--feature-gates=GenericWorkload=true")...)
			if err != nil {
				return err
			}
			lanes = append(lanes, watch.LaneSpec{Name: s.Label, Scheduler: s})
			continue
		}
		cmd := append([]string{bin}, watch.ChapterFlags...)
		lanes = append(lanes, watch.LaneSpec{Name: c.Dir, Scheduler: e2e.Scheduler{Chapter: c.Number, Label: c.Dir, Command: cmd}})
	}
	if *vs == "upstream" {
		up, err := e2e.UpstreamScheduler(*tools, dir, chosen[0].Number)
		if err != nil {
			return err
		}
		// Its own flags, but the feature gates of its configuration.
		gates := slices.DeleteFunc(slices.Clone(up.Command[1:]), func(f string) bool { return !strings.HasPrefix(f, "--feature-gates") })
		up.Command = append(append([]string{up.Command[0]}, watch.UpstreamFlags...), gates...)
		up.Label = fmt.Sprintf("kube-scheduler v1.37.1 (like %s)", chosen[0].Dir[:2])
		lanes = append(lanes, watch.LaneSpec{Name: up.Label, Scheduler: up})
	}
	if len(lanes) == 1 {
		lanes[0].Kubeconfig = *kubeconfig
		if *kubeconfig == "" {
			// One lane watches the local cluster, started if it is not
			// up, so that kubectl (make env) sees what the page shows.
			local, err := filepath.Abs(filepath.Join(".cache", "cluster"))
			if err != nil {
				return err
			}
			up := exec.CommandContext(ctx, *clusterBin, "up", "--dir", local, "--tools", *tools)
			up.Stdout, up.Stderr = os.Stdout, os.Stderr
			if err := up.Run(); err != nil {
				return fmt.Errorf("starting the local cluster: %w", err)
			}
			lanes[0].Kubeconfig = filepath.Join(local, "kubeconfig")
		}
	} else if *kubeconfig != "" {
		return errors.New("--kubeconfig goes with one chapter: side by side, each scheduler gets a cluster of its own")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	examples, _ := filepath.Abs(filepath.Join("docs", "examples"))
	r, err := watch.Start(ctx, watch.Options{Tools: *tools, Dir: dir, Lanes: lanes, Addr: *addr, Examples: examples, Record: *record, AllowRemote: *allowRemote})
	if err != nil {
		return err
	}
	defer func() { _ = r.Stop() }()
	for i, l := range lanes {
		fmt.Printf("%s: log %s\n", l.Name, r.Logs[i])
	}
	if *record != "" {
		fmt.Printf("Recording to %s; make watch REPLAY=%s shows it again.\n", *record, *record)
	}
	fmt.Printf("Open %s (Ctrl-C stops).\n", r.URL)
	<-ctx.Done()
	fmt.Println("Stopping ...")
	return r.Stop()
}

// removeEnded removes what earlier runs of make watch left under base:
// the folders run-PID of processes that no longer exist.
func removeEnded(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, isRun := strings.CutPrefix(e.Name(), "run-")
		pid, err := strconv.Atoi(rest)
		if isRun && err == nil && pid > 0 && (pid == os.Getpid() || processExists(pid)) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(base, e.Name()))
	}
}

// processExists says whether a process of that ID runs (signal 0 checks
// without sending anything; EPERM means it runs as someone else).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func serveReplay(ctx context.Context, path, addr string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	rec, err := watch.ReadRecording(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: (&watch.Server{Replay: rec}).Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	from, to := rec.Span()
	fmt.Printf("Replaying %s (%s, %d inputs). Open http://%s/ (Ctrl-C stops).\n", path, to.Sub(from).Round(time.Millisecond), len(rec.Inputs), ln.Addr())
	<-ctx.Done()
	return srv.Close()
}
