package app

// This file mirrors cmd/kube-scheduler/app/options/options.go of
// k8s.io/kubernetes: the flags, their defaults, and their validation.

import (
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"

	"minisched/12-observability/scheduler"
)

// Options holds everything the command line sets.
type Options struct {
	// Kubeconfig is the path of the kubeconfig file. Empty means $KUBECONFIG,
	// then the in-cluster config.
	Kubeconfig string
	// SchedulerName is the spec.schedulerName whose pods are scheduled.
	SchedulerName string
	// KubeAPIQPS and KubeAPIBurst rate-limit the client. The defaults are
	// upstream's, so that comparisons with kube-scheduler are fair.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// MetricsBindAddress is where /healthz and /metrics are served. It is a
	// loopback address unless the user asks for another.
	MetricsBindAddress string
	// PodMaxInUnschedulablePodsDuration is how long a pod may wait in the
	// unschedulable pool for an event before it is tried again anyway.
	PodMaxInUnschedulablePodsDuration time.Duration
	// PodInitialBackoffDuration is a pod's backoff after its first failure;
	// it doubles with each failure up to PodMaxBackoffDuration.
	PodInitialBackoffDuration time.Duration
	PodMaxBackoffDuration     time.Duration
	// PercentageOfNodesToScore is the share of the nodes, in percent,
	// among which a cycle looks for feasible ones; 0 adapts it to the
	// cluster's size. Parallelism bounds the goroutines of the Filter and
	// Score loops.
	PercentageOfNodesToScore int32
	Parallelism              int
	// PowerOfTwoChoices turns on the experiment: each cycle scores only
	// PowerOfTwoChoicesD feasible nodes, sampled at random.
	PowerOfTwoChoices  bool
	PowerOfTwoChoicesD int
	// ScoringStrategy is NodeResourcesFit's: LeastAllocated (upstream's
	// default) or MostAllocated.
	ScoringStrategy string
	// TraceFile, when set, is where the Go execution trace of the whole
	// run is written: one task per scheduling attempt, with regions for
	// each extension point and plugin. make trace reads it.
	TraceFile string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		SchedulerName:      scheduler.DefaultSchedulerName,
		KubeAPIQPS:         50,
		KubeAPIBurst:       100,
		MetricsBindAddress: "127.0.0.1:10251",

		PodMaxInUnschedulablePodsDuration: scheduler.DefaultPodMaxInUnschedulablePodsDuration,
		PodInitialBackoffDuration:         scheduler.DefaultPodInitialBackoffDuration,
		PodMaxBackoffDuration:             scheduler.DefaultPodMaxBackoffDuration,
		Parallelism:                       parallelize.DefaultParallelism,
		PowerOfTwoChoicesD:                2,
		ScoringStrategy:                   string(config.LeastAllocated),
	}
}

// AddFlags registers the options, and klog's flags (-v and friends), on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file. Defaults to $KUBECONFIG, then to the in-cluster config.")
	fs.StringVar(&o.SchedulerName, "scheduler-name", o.SchedulerName, "Only pods whose spec.schedulerName is this are scheduled.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Queries per second allowed towards the apiserver.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst of queries allowed towards the apiserver.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "host:port where /healthz and /metrics are served over HTTP.")
	// Upstream's flag of the same name (deprecated there in favour of the
	// component config) sets the same duration.
	fs.DurationVar(&o.PodMaxInUnschedulablePodsDuration, "pod-max-in-unschedulable-pods-duration", o.PodMaxInUnschedulablePodsDuration, "How long a pod may wait in the unschedulable pool before it is tried again without an event that could help it.")
	// Upstream sets these in the component config, as podInitialBackoffSeconds
	// and podMaxBackoffSeconds; durations here let tests use less than a
	// second.
	fs.DurationVar(&o.PodInitialBackoffDuration, "pod-initial-backoff-duration", o.PodInitialBackoffDuration, "Backoff of a pod after its first failed attempt. It doubles with each consecutive failure.")
	fs.DurationVar(&o.PodMaxBackoffDuration, "pod-max-backoff-duration", o.PodMaxBackoffDuration, "The longest backoff of a pod.")
	// Upstream sets these two in the component config, as
	// percentageOfNodesToScore and parallelism.
	fs.Int32Var(&o.PercentageOfNodesToScore, "percentage-of-nodes-to-score", o.PercentageOfNodesToScore, "Percentage of the nodes among which a cycle looks for feasible ones, at least 100 nodes. 0 adapts it to the cluster's size (50% less 1% per 125 nodes, at least 5%); 100 looks at every node.")
	fs.IntVar(&o.Parallelism, "parallelism", o.Parallelism, "How many goroutines the Filter and Score loops use at most.")
	// Not upstream: an experiment after kubernetes/kubernetes#86630.
	fs.BoolVar(&o.PowerOfTwoChoices, "power-of-two-choices", o.PowerOfTwoChoices, "Experiment, not in kube-scheduler: score only --power-of-two-choices-d feasible nodes, sampled at random, and keep the best.")
	// Upstream sets it in NodeResourcesFit's args, as scoringStrategy.type.
	fs.StringVar(&o.ScoringStrategy, "scoring-strategy", o.ScoringStrategy, "NodeResourcesFit's scoring strategy: LeastAllocated spreads pods, MostAllocated packs them.")
	fs.IntVar(&o.PowerOfTwoChoicesD, "power-of-two-choices-d", o.PowerOfTwoChoicesD, "How many feasible nodes --power-of-two-choices samples.")
	// Not upstream, which has no span tracing (only utiltrace's log line
	// for a schedulePod call of 100 ms or more; KEP-5927 proposes OpenTelemetry
	// spans): Go's own execution tracer.
	fs.StringVar(&o.TraceFile, "trace-file", o.TraceFile, "Write a Go execution trace of the run to this file: a task per scheduling attempt, a region per extension point and plugin (make trace converts it for Perfetto). Off when empty.")

	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	// Every scheduling decision is logged at -v=2, the level at which
	// upstream logs its bindings: run with -v=2 to watch them.
	fs.AddGoFlagSet(klogFlags)
}

// Validate reports the first invalid option, in one line.
func (o *Options) Validate() error {
	if o.SchedulerName == "" {
		return fmt.Errorf("--scheduler-name must not be empty")
	}
	if o.KubeAPIQPS <= 0 {
		return fmt.Errorf("--kube-api-qps must be positive, got %v", o.KubeAPIQPS)
	}
	if o.KubeAPIBurst <= 0 {
		return fmt.Errorf("--kube-api-burst must be positive, got %d", o.KubeAPIBurst)
	}
	if o.PodMaxInUnschedulablePodsDuration <= 0 {
		return fmt.Errorf("--pod-max-in-unschedulable-pods-duration must be positive, got %v", o.PodMaxInUnschedulablePodsDuration)
	}
	// Upstream's validation of podInitialBackoffSeconds and
	// podMaxBackoffSeconds.
	if o.PodInitialBackoffDuration <= 0 {
		return fmt.Errorf("--pod-initial-backoff-duration must be positive, got %v", o.PodInitialBackoffDuration)
	}
	if o.PodMaxBackoffDuration < o.PodInitialBackoffDuration {
		return fmt.Errorf("--pod-max-backoff-duration must be at least --pod-initial-backoff-duration (%v), got %v", o.PodInitialBackoffDuration, o.PodMaxBackoffDuration)
	}
	// Upstream's validation of percentageOfNodesToScore and parallelism.
	if o.PercentageOfNodesToScore < 0 || o.PercentageOfNodesToScore > 100 {
		return fmt.Errorf("--percentage-of-nodes-to-score must be in the range [0, 100], got %d", o.PercentageOfNodesToScore)
	}
	if o.Parallelism <= 0 {
		return fmt.Errorf("--parallelism must be positive, got %d", o.Parallelism)
	}
	if s := config.ScoringStrategyType(o.ScoringStrategy); s != config.LeastAllocated && s != config.MostAllocated {
		return fmt.Errorf("--scoring-strategy must be LeastAllocated or MostAllocated, got %q", o.ScoringStrategy)
	}
	if o.PowerOfTwoChoices && o.PowerOfTwoChoicesD < 1 {
		return fmt.Errorf("--power-of-two-choices-d must be positive, got %d", o.PowerOfTwoChoicesD)
	}
	if _, _, err := net.SplitHostPort(o.MetricsBindAddress); err != nil {
		return fmt.Errorf("--metrics-bind-address %q: %w", o.MetricsBindAddress, err)
	}
	// The file is created once the apiserver answers; a directory that is
	// not there is a typo to report before that.
	if o.TraceFile != "" {
		if fi, err := os.Stat(filepath.Dir(o.TraceFile)); err != nil || !fi.IsDir() {
			return fmt.Errorf("--trace-file %q: no directory %s to write it in", o.TraceFile, filepath.Dir(o.TraceFile))
		}
	}
	return nil
}
