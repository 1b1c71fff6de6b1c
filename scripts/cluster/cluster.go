// Package cluster starts minisched's local cluster: etcd and kube-apiserver
// (through envtest) and the KWOK controller, which makes annotated fake nodes
// Ready and turns pods bound to them Running. Everything listens on
// 127.0.0.1; nothing needs Docker.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	restclient "k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// FakeNodeAnnotation marks the nodes KWOK manages. Every node the scripts
// create carries it; nodes without it are left alone.
const FakeNodeAnnotation = "kwok.x-k8s.io/node"

// FakeNodeAnnotationValue is the value FakeNodeAnnotation must have.
const FakeNodeAnnotationValue = "fake"

// WorkloadAPIFeatureGates and WorkloadAPIRuntimeConfig turn on the Workload
// API (PodGroups) on kube-apiserver; kube-scheduler needs the same gate to
// schedule pod groups.
const (
	WorkloadAPIFeatureGates  = "GenericWorkload=true"
	WorkloadAPIRuntimeConfig = "scheduling.k8s.io/v1beta1=true"
)

// Options says where the binaries are and where the cluster keeps its files.
type Options struct {
	// ToolsDir holds bin/ (etcd, kube-apiserver, kwok) and kwok-stages.yaml,
	// as scripts/build-tools.sh leaves them.
	ToolsDir string
	// Dir receives the kubeconfig, the audit log and the component logs.
	Dir string
	// ExtraAPIServerArgs are added to kube-apiserver's command line.
	ExtraAPIServerArgs map[string]string
}

// Cluster is a running local cluster.
type Cluster struct {
	// Config is an admin client config.
	Config *restclient.Config
	// Kubeconfig is the path of an admin kubeconfig file.
	Kubeconfig string
	// AuditLog is the path of the apiserver's audit log (see AuditPolicy).
	AuditLog string

	env      *envtest.Environment
	kwok     *exec.Cmd
	kwokDone chan struct{} // closed when the kwok process has exited
	apiLog   *os.File      // kube-apiserver's output, across restarts
	dir      string
}

// AuditPolicy records what the scripts check afterwards: every Binding with
// its target, every change of a node with the node as it was after the
// change (so a binding can be judged against the node it went to), and
// every pod's deletion (so a gang's Bindings can be judged against the
// members still bound).
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  verbs: [create]
  resources: [{group: "", resources: ["pods/binding"]}]
- level: RequestResponse
  verbs: [create, update, patch, delete]
  resources: [{group: "", resources: ["nodes"]}]
- level: Metadata
  verbs: [delete]
  resources: [{group: "", resources: ["pods"]}]
- level: None
`

var setLogger sync.Once

// Start starts etcd, kube-apiserver and kwok, and returns when the apiserver
// answers and kwok runs. Stop undoes everything, also when Start fails half
// way.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	bin := filepath.Join(opts.ToolsDir, "bin")
	for _, name := range []string{"etcd", "kube-apiserver", "kwok"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run `make tools`", name, bin)
		}
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	started := &Cluster{dir: opts.Dir, AuditLog: filepath.Join(opts.Dir, "audit.log"), Kubeconfig: filepath.Join(opts.Dir, "kubeconfig")}
	c = started
	// The failing returns below set c to nil: stop what they started
	// through started.
	defer func() {
		if err != nil {
			_ = started.Stop()
		}
	}()

	policy := filepath.Join(opts.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(AuditPolicy), 0o644); err != nil {
		return nil, err
	}
	// envtest logs through controller-runtime's logger, which complains
	// with a stack trace when nobody set it: send it to klog, once (lanes
	// start clusters side by side, and SetLogger is not safe for that).
	setLogger.Do(func() { ctrllog.SetLogger(klog.Background()) })
	c.env = &envtest.Environment{BinaryAssetsDirectory: bin, ControlPlaneStartTimeout: 60 * time.Second, ControlPlaneStopTimeout: 90 * time.Second}
	apiServer := c.env.ControlPlane.GetAPIServer()
	// A directory of our own for the serving certificates: envtest keeps
	// certificates it finds there, and only cleans (and so regenerates) a
	// directory it made itself. RestartAPIServer relies on this.
	apiServer.CertDir = filepath.Join(opts.Dir, "apiserver")
	if err := os.MkdirAll(apiServer.CertDir, 0o700); err != nil {
		return nil, err
	}
	if c.apiLog, err = os.Create(filepath.Join(opts.Dir, "kube-apiserver.log")); err != nil {
		return nil, err
	}
	apiServer.Out, apiServer.Err = c.apiLog, c.apiLog
	args := apiServer.Configure()
	// Without a node lifecycle controller, TaintNodesByCondition would leave
	// every new node tainted not-ready forever. ServiceAccount admission
	// stays off as envtest has it: no controller creates default accounts.
	args.Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition")
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", c.AuditLog)
	args.Set("audit-log-format", "json")
	// On SIGTERM the apiserver waits for its connections to close, up to
	// a minute, and open watches never do. A grace period for watches makes
	// it end them instead: a stop (and RestartAPIServer) takes seconds.
	args.Set("shutdown-watch-termination-grace-period", "2s")
	// The Workload API, which chapter 11 schedules: PodGroups of
	// scheduling.k8s.io/v1beta1, served in v1.37 only with the beta
	// GenericWorkload gate on and the API version turned on. Every chapter
	// runs on this cluster; chapters 01-10 leave a pod's
	// spec.schedulingGroup alone and schedule the pod as any other.
	args.Set("feature-gates", WorkloadAPIFeatureGates)
	args.Set("runtime-config", WorkloadAPIRuntimeConfig)
	for k, v := range opts.ExtraAPIServerArgs {
		args.Set(k, v)
	}
	if _, err := c.env.Start(); err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	admin, err := c.env.AddUser(envtest.User{Name: "minisched-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("creating the admin user: %w", err)
	}
	c.Config = admin.Config()
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.Kubeconfig, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	if err := c.startKWOK(ctx, opts.ToolsDir); err != nil {
		return nil, err
	}
	return c, nil
}

// startKWOK runs the KWOK controller on the nodes annotated as fake, with
// the stages that make them Ready and their pods Running.
func (c *Cluster) startKWOK(ctx context.Context, toolsDir string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(c.dir, "kwok.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	c.kwok = exec.Command(filepath.Join(toolsDir, "bin", "kwok"),
		"--kubeconfig="+c.Kubeconfig,
		"--config="+filepath.Join(toolsDir, "kwok-stages.yaml"),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+FakeNodeAnnotation+"="+FakeNodeAnnotationValue,
		"--server-address=127.0.0.1:"+strconv.Itoa(port),
	)
	c.kwok.Stdout, c.kwok.Stderr = logFile, logFile
	if err := c.kwok.Start(); err != nil {
		return fmt.Errorf("starting kwok: %w", err)
	}
	c.kwokDone = make(chan struct{})
	var waitErr error
	go func() { waitErr = c.kwok.Wait(); close(c.kwokDone) }()
	// kwok opens its server once its controllers run.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-c.kwokDone:
			return fmt.Errorf("kwok exited at start (%v); see %s", waitErr, logFile.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			conn.Close()
			return nil
		}
	}
	return fmt.Errorf("kwok did not start listening within 30s; see %s", logFile.Name())
}

// StopAPIServer stops kube-apiserver alone, as a crash or an upgrade would:
// etcd keeps running with the data. Clients see their connections and
// watches drop, and must reconnect on their own once StartAPIServer runs.
func (c *Cluster) StopAPIServer() error {
	if err := c.env.ControlPlane.APIServer.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the
// same port, with the same serving certificate (kept in CertDir) and the
// same client CA (kept in memory), so every kubeconfig written so far stays
// valid. It returns once the apiserver answers its health check.
func (c *Cluster) StartAPIServer() error {
	if err := c.env.ControlPlane.APIServer.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	return nil
}

// RestartAPIServer stops kube-apiserver, waits down, and starts it again.
func (c *Cluster) RestartAPIServer(down time.Duration) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	time.Sleep(down)
	return c.StartAPIServer()
}

// Stop stops kwok, kube-apiserver and etcd. envtest removes the data and
// certificate directories it made.
func (c *Cluster) Stop() error {
	var errs []error
	if c.kwokDone != nil {
		_ = c.kwok.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.kwokDone:
		case <-time.After(10 * time.Second):
			_ = c.kwok.Process.Kill()
			<-c.kwokDone
		}
	}
	if c.env != nil {
		if err := c.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping etcd and kube-apiserver: %w", err))
		}
	}
	if c.apiLog != nil {
		_ = c.apiLog.Close()
	}
	return errors.Join(errs...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TestTools finds, for a test, the tools `make tools` builds:
// $MINISCHED_TOOLS_DIR (make test sets it), else .cache/tools under root,
// the repository. Missing tools are an error that says how to build them:
// the tests fail on it, they do not skip.
func TestTools(root string) (string, error) {
	dir := os.Getenv("MINISCHED_TOOLS_DIR")
	if dir == "" {
		var err error
		if dir, err = filepath.Abs(filepath.Join(root, ".cache", "tools")); err != nil {
			return "", err
		}
	}
	for _, name := range []string{"kwok", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, "bin", name)); err != nil {
			return "", fmt.Errorf("no tools in %s: run `make tools` (make test does) or set MINISCHED_TOOLS_DIR", dir)
		}
	}
	return dir, nil
}
