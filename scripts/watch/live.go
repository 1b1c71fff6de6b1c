package watch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"minisched/scripts/cluster"
	"minisched/scripts/e2e"
)

// ChapterFlags are the verbosity flags make watch runs a chapter with:
// its queue's moves at -v=3, its gated pods at -v=5 (scheduling_queue.go);
// the preemption's candidates at -v=5 (preemption.go,
// default_preemption.go); its Filter verdicts and scores at -v=10
// (schedule_one.go) and its raw scores at -v=10 (framework.go). All of
// -v=10 would add client-go's requests and responses.
var ChapterFlags = []string{"-v=3", "--vmodule=schedule_one=10,schedule_one_podgroup=10,framework=10,scheduling_queue=5,preemption=5,default_preemption=5"}

// UpstreamFlags are kube-scheduler's: its moves into activeQ and backoffQ
// and its gated pods at -v=5 (active_queue.go, backoff_queue.go,
// scheduling_queue.go), the preemption's candidates at -v=5
// (preemption.go, default_preemption.go), its scores at -v=10
// (schedule_one.go).
var UpstreamFlags = []string{"-v=3", "--vmodule=schedule_one=10,schedule_one_podgroup=10,active_queue=5,backoff_queue=5,scheduling_queue=5,preemption=5,default_preemption=5"}

// LaneSpec is one scheduler to watch.
type LaneSpec struct {
	Name string
	// Scheduler is started on the lane's cluster, its log followed. With
	// no Command, none is started, and Log names the log to follow (a
	// scheduler someone else starts, as the browser test's scenario does).
	Scheduler e2e.Scheduler
	Log       string
	// Kubeconfig is a running cluster's; empty starts a fresh cluster of
	// the lane's own.
	Kubeconfig string
}

// Options is what Start needs.
type Options struct {
	Tools string
	// Dir holds the lanes' clusters and logs.
	Dir   string
	Lanes []LaneSpec
	// Addr is where the page is served: an address on 127.0.0.1.
	Addr string
	// Examples is docs/examples.
	Examples string
	// Record, if set, is the file the session is recorded to.
	Record string
	// AllowRemote lets a lane's kubeconfig point at another machine.
	AllowRemote bool
}

// Running is a live make watch.
type Running struct {
	URL      string
	Session  *Session
	Clusters []*cluster.Cluster
	Logs     []string
	Configs  []*restclient.Config
	stop     []func() error
	server   *http.Server
	recFile  *os.File
	stopped  bool
	// follow is the context of the session's followers.
	follow context.Context
}

// FollowLog follows one more log for lane i: a scheduler that writes a
// new log for each scenario.
func (r *Running) FollowLog(i int, path string) {
	r.Logs = append(r.Logs, path)
	r.Session.FollowLog(r.follow, i, path)
}

// Start starts every lane's cluster (or connects to the one given), its
// scheduler, the session that follows both, and the page's server.
// Stop undoes all of it, also when Start fails half way.
func Start(ctx context.Context, opts Options) (r *Running, err error) {
	if err := CheckLoopback(opts.Addr); err != nil {
		return nil, err
	}
	started := &Running{}
	defer func() {
		if err != nil {
			_ = started.Stop()
		}
	}()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	header := Header{Started: time.Now()}
	var targets []Target
	var warning string
	for i, l := range opts.Lanes {
		header.Lanes = append(header.Lanes, l.Name)
		header.Upstream = append(header.Upstream, l.Scheduler.IsKubeScheduler())
		header.Chapters = append(header.Chapters, l.Scheduler.Chapter)
		kubeconfig := l.Kubeconfig
		if kubeconfig == "" {
			c, err := cluster.Start(ctx, cluster.Options{ToolsDir: opts.Tools, Dir: filepath.Join(opts.Dir, fmt.Sprintf("lane-%d", i+1))})
			if err != nil {
				return nil, fmt.Errorf("%s: starting its cluster: %w", l.Name, err)
			}
			started.Clusters = append(started.Clusters, c)
			started.stop = append(started.stop, c.Stop)
			kubeconfig = c.Kubeconfig
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name, err)
		}
		if err := checkAPIServer(cfg.Host); err != nil {
			if !opts.AllowRemote {
				return nil, fmt.Errorf("%s: %w; --allow-remote lets make watch write there", l.Name, err)
			}
			warning = fmt.Sprintf("%s writes to %s, which is not on this machine", l.Name, cfg.Host)
		}
		started.Configs = append(started.Configs, cfg)
		t, err := target(cfg)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	var rec *Recorder
	if opts.Record != "" {
		f, err := os.Create(opts.Record)
		if err != nil {
			return nil, err
		}
		started.recFile = f
		if rec, err = NewRecorder(f, header); err != nil {
			return nil, err
		}
	}
	started.Session = NewSession(header, rec)
	follow, cancel := context.WithCancel(context.Background())
	started.follow = follow
	session := started.Session
	started.stop = append(started.stop, func() error { cancel(); session.Close(); return nil })
	for i, l := range opts.Lanes {
		if err := started.Session.FollowCluster(follow, i, targets[i].Client); err != nil {
			return nil, fmt.Errorf("%s: %w", l.Name, err)
		}
		logPath := l.Log
		if len(l.Scheduler.Command) > 0 {
			logPath = filepath.Join(opts.Dir, fmt.Sprintf("lane-%d.log", i+1))
			kubeconfig := l.Kubeconfig
			if kubeconfig == "" {
				kubeconfig = started.Clusters[clusterIndex(opts.Lanes, i)].Kubeconfig
			}
			proc, err := e2e.StartScheduler(l.Scheduler, kubeconfig, nil, logPath)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.Name, err)
			}
			started.stop = append(started.stop, func() error { return proc.Stop(false) })
			if err := proc.WaitServing(); err != nil {
				return nil, fmt.Errorf("%s: %w (see %s)", l.Name, err, logPath)
			}
			started.Session.FollowMetrics(follow, i, proc.Addr(), l.Scheduler.IsKubeScheduler())
		}
		started.Logs = append(started.Logs, logPath)
		started.Session.FollowLog(follow, i, logPath)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	srv := &Server{Session: started.Session, Targets: targets, Examples: opts.Examples, Warning: warning, Interval: 200 * time.Millisecond}
	started.server = &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = started.server.Serve(ln) }()
	started.URL = "http://" + ln.Addr().String() + "/"
	return started, nil
}

// clusterIndex is the index, among the clusters Start started, of lane
// i's.
func clusterIndex(lanes []LaneSpec, i int) int {
	n := 0
	for j := 0; j < i; j++ {
		if lanes[j].Kubeconfig == "" {
			n++
		}
	}
	return n
}

// Stop stops the server, the schedulers and the clusters Start started,
// and closes the recording.
func (r *Running) Stop() error {
	// A caller that stops early defers Stop too: the second is a no-op.
	if r.stopped {
		return nil
	}
	r.stopped = true
	var errs []error
	if r.server != nil {
		// Close, not Shutdown: the page's streams never end on their own.
		_ = r.server.Close()
	}
	for i := len(r.stop) - 1; i >= 0; i-- {
		if err := r.stop[i](); err != nil {
			errs = append(errs, err)
		}
	}
	if r.Session != nil {
		errs = append(errs, r.Session.Flush())
	}
	if r.recFile != nil {
		errs = append(errs, r.recFile.Close())
	}
	return errors.Join(errs...)
}

func target(cfg *restclient.Config) (Target, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Target{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Target{}, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Target{}, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	return Target{Client: client, Dynamic: dyn, Mapper: mapper, SchedulerName: e2e.DefaultSchedulerName}, nil
}

// CheckLoopback refuses an address to serve on that is not 127.0.0.1 or
// ::1: the page can create and delete objects.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q: make watch serves on 127.0.0.1 only", addr)
	}
	return nil
}

// checkAPIServer refuses an apiserver that is not on this machine.
func checkAPIServer(host string) error {
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		u = &url.URL{Host: host}
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return nil
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("the apiserver %s is not on this machine", host)
}
