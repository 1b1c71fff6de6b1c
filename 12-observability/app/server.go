// Package app is the mini-scheduler command. It mirrors
// cmd/kube-scheduler/app/server.go of k8s.io/kubernetes: parse the flags,
// build the clients, serve /healthz and /metrics, and run the scheduler until
// the context ends.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/trace"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"minisched/12-observability/scheduler"
)

// Run parses args, connects to the apiserver and schedules pods until ctx is
// cancelled. Every error it returns is one line meant for the user; the
// caller prints it and exits non-zero.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	opts := NewOptions()
	fs := pflag.NewFlagSet("mini-scheduler", pflag.ContinueOnError)
	// pflag would print the whole usage on a bad flag; one line is enough.
	fs.SetOutput(io.Discard)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage of mini-scheduler:\n%s", fs.FlagUsages())
			return nil
		}
		return fmt.Errorf("%w (see --help)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	if err := opts.Validate(); err != nil {
		return err
	}

	kubeConfig, err := buildConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	kubeConfig.QPS = opts.KubeAPIQPS
	kubeConfig.Burst = opts.KubeAPIBurst
	// The client speaks protobuf and asks for no compression, as upstream's
	// createKubeConfig sets it up (cmd/kube-scheduler/app/options/options.go);
	// protobuf is the content type its clientConnection defaults to
	// (SetDefaults_KubeSchedulerConfiguration in
	// pkg/scheduler/apis/config/v1/defaults.go). Every watch event of every
	// pod is decoded, and protobuf costs less CPU to decode than JSON.
	kubeConfig.ContentType = "application/vnd.kubernetes.protobuf"
	kubeConfig.DisableCompression = true
	client, eventClient, err := createClients(kubeConfig)
	if err != nil {
		return err
	}
	if err := checkAPIServer(kubeConfig); err != nil {
		return err
	}

	// Listen before starting anything, so a port in use is a clean error.
	listener, err := net.Listen("tcp", opts.MetricsBindAddress)
	if err != nil {
		return fmt.Errorf("serving /healthz and /metrics: %w", err)
	}
	if opts.TraceFile != "" {
		stopTrace, err := startTrace(opts.TraceFile)
		if err != nil {
			listener.Close()
			return err
		}
		// Stopped last, after the scheduler and its binding goroutines
		// have ended, so that every attempt's task is complete in it. An
		// asynchronous preemption still evicting then is not waited for,
		// and its asyncPreemption task stays open in the file.
		defer func() {
			if err := stopTrace(); err != nil {
				klog.FromContext(ctx).Error(err, "Writing the trace file failed", "path", opts.TraceFile)
			}
		}()
	}

	logger := klog.FromContext(ctx)
	ctx = klog.NewContext(ctx, logger)
	metrics.Register()
	server := &http.Server{Handler: newHealthzAndMetricsHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "Serving /healthz and /metrics failed")
		}
	}()
	logger.Info("Serving /healthz and /metrics", "address", listener.Addr().String())

	// Events go through events.k8s.io, as upstream's do, on their own client
	// so that they never wait behind the scheduler's rate limit.
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: eventClient.EventsV1()})
	broadcaster.StartRecordingToSink(ctx.Done())
	recorder := broadcaster.NewRecorder(scheme.Scheme, opts.SchedulerName)

	sched, err := scheduler.New(ctx, client, recorder, scheduler.WithSchedulerName(opts.SchedulerName),
		scheduler.WithPodMaxInUnschedulablePodsDuration(opts.PodMaxInUnschedulablePodsDuration),
		scheduler.WithPodInitialBackoffDuration(opts.PodInitialBackoffDuration),
		scheduler.WithPodMaxBackoffDuration(opts.PodMaxBackoffDuration),
		scheduler.WithPercentageOfNodesToScore(opts.PercentageOfNodesToScore),
		scheduler.WithParallelism(opts.Parallelism),
		scheduler.WithPowerOfChoices(powerOfChoices(opts)),
		scheduler.WithScoringStrategy(config.ScoringStrategyType(opts.ScoringStrategy)))
	if err != nil {
		return err
	}
	logger.Info("Starting mini-scheduler", "schedulerName", opts.SchedulerName, "apiserver", kubeConfig.Host)
	if err := sched.Run(ctx); err != nil {
		return err
	}

	logger.Info("Shutting down")
	broadcaster.Shutdown()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return server.Shutdown(shutdownCtx)
}

// startTrace starts Go's execution tracer, writing to path, and returns
// the function that stops it and closes the file. The tracer records when
// every goroutine runs, and the tasks and regions the scheduler marks; it
// is off unless --trace-file is set, and what it costs then grows with
// the regions it records (one per plugin per node).
func startTrace(path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--trace-file: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--trace-file: %w", err)
	}
	return func() error {
		trace.Stop()
		return f.Close()
	}, nil
}

// powerOfChoices is how many feasible nodes a cycle samples: 0, for every
// node it finds, unless the experiment is on.
func powerOfChoices(o *Options) int {
	if !o.PowerOfTwoChoices {
		return 0
	}
	return o.PowerOfTwoChoicesD
}

// buildConfig loads the kubeconfig named by --kubeconfig, else by
// $KUBECONFIG, else the in-cluster config, as upstream's command does.
func buildConfig(kubeconfig string) (*restclient.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	switch {
	case kubeconfig != "":
		rules.ExplicitPath = kubeconfig
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		// The default rules already read $KUBECONFIG (a list of paths).
	default:
		config, err := restclient.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no kubeconfig: pass --kubeconfig or set KUBECONFIG (in-cluster config: %v)", err)
		}
		return config, nil
	}
	rules.Precedence = filepath.SplitList(os.Getenv(clientcmd.RecommendedConfigPathEnvVar))
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return config, nil
}

// createClients returns the scheduler's client and the events client, built
// from the same config as upstream's createClients builds them: each has its
// own rate limiter.
func createClients(config *restclient.Config) (kubernetes.Interface, kubernetes.Interface, error) {
	client, err := kubernetes.NewForConfig(restclient.AddUserAgent(config, "mini-scheduler"))
	if err != nil {
		return nil, nil, fmt.Errorf("creating the client: %w", err)
	}
	eventClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the events client: %w", err)
	}
	return client, eventClient, nil
}

// checkAPIServer asks the apiserver for its version, so that a wrong address
// or wrong credentials fail at once with one clear line, rather than as a
// stream of watch errors.
func checkAPIServer(config *restclient.Config) error {
	probe := restclient.CopyConfig(config)
	probe.Timeout = 10 * time.Second
	client, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return fmt.Errorf("creating the client: %w", err)
	}
	if _, err := client.Discovery().ServerVersion(); err != nil {
		return fmt.Errorf("cannot reach the apiserver at %s: %w", config.Host, err)
	}
	return checkPodGroupAPI(client, config.Host)
}

// podGroupGroupVersion is the API version of the PodGroups this chapter
// schedules.
const podGroupGroupVersion = "scheduling.k8s.io/v1beta1"

// checkPodGroupAPI makes sure the apiserver serves PodGroups. Without them
// the PodGroup informer would retry its list for ever and the scheduler
// would wait, silently, for it to sync; a clear line now is better.
func checkPodGroupAPI(client kubernetes.Interface, host string) error {
	resources, err := client.Discovery().ServerResourcesForGroupVersion(podGroupGroupVersion)
	if err == nil {
		for _, r := range resources.APIResources {
			if r.Name == "podgroups" {
				return nil
			}
		}
	}
	return fmt.Errorf("the apiserver at %s does not serve %s PodGroups, which this chapter schedules: start it with --feature-gates=GenericWorkload=true --runtime-config=%s=true", host, podGroupGroupVersion, podGroupGroupVersion)
}

// newHealthzAndMetricsHandler serves /healthz, which answers "ok" while the
// process runs, and /metrics in the Prometheus text format.
func newHealthzAndMetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	mux.Handle("/metrics", legacyregistry.Handler())
	return mux
}
