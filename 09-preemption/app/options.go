package app

// This file mirrors cmd/kube-scheduler/app/options/options.go of
// k8s.io/kubernetes: the flags, their defaults, and their validation.

import (
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"minisched/09-preemption/scheduler"
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
	if _, _, err := net.SplitHostPort(o.MetricsBindAddress); err != nil {
		return fmt.Errorf("--metrics-bind-address %q: %w", o.MetricsBindAddress, err)
	}
	return nil
}
