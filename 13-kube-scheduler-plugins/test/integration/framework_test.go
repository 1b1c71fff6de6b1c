// Package integration runs kube-scheduler v1.37.1, built with this
// chapter's plugins, in the test's process against a real kube-apiserver
// and etcd started by envtest, once per configuration the chapter ships,
// as kubernetes-sigs/scheduler-plugins' test/integration runs the real
// scheduler with its plugins.
package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/compatibility"
	"k8s.io/component-base/configz"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"minisched/13-kube-scheduler-plugins/pkg/registry"
)

// assetsDir finds etcd and kube-apiserver: $KUBEBUILDER_ASSETS, else the
// tools cache that `make tools` fills. A missing binary fails the test: an
// integration test that skips proves nothing.
func assetsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "..", ".cache", "tools", "bin"))
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			t.Fatalf("%s not found in %s: run `make tools` (make test does) or set KUBEBUILDER_ASSETS", bin, dir)
		}
	}
	return dir
}

// controlPlane is the etcd and kube-apiserver the package's tests share,
// started by the first test that needs them and stopped by TestMain, as
// upstream's integration packages share one etcd.
var controlPlane struct {
	mu  sync.Mutex
	env *envtest.Environment
	cfg *restclient.Config
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := stopControlPlane(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// startAPIServer returns an admin config for etcd and kube-apiserver on
// 127.0.0.1, started by the first test that asks, with no nodes and no
// pods.
func startAPIServer(t *testing.T) *restclient.Config {
	t.Helper()
	dir := assetsDir(t)
	controlPlane.mu.Lock()
	if controlPlane.env == nil {
		env := &envtest.Environment{BinaryAssetsDirectory: dir}
		// Without a node lifecycle controller, TaintNodesByCondition would
		// leave every new node tainted not-ready forever; no controller
		// creates the default service accounts either.
		args := env.ControlPlane.GetAPIServer().Configure()
		args.Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition")
		cfg, err := env.Start()
		if err != nil {
			controlPlane.mu.Unlock()
			t.Fatalf("starting the control plane: %v", err)
		}
		controlPlane.env, controlPlane.cfg = env, cfg
	}
	cfg := restclient.CopyConfig(controlPlane.cfg)
	controlPlane.mu.Unlock()
	t.Cleanup(func() {
		if t.Failed() {
			if err := stopControlPlane(); err != nil {
				t.Errorf("stopping the control plane: %v", err)
			}
		}
	})
	cfg.QPS, cfg.Burst = 500, 1000
	emptyCluster(t, kubernetes.NewForConfigOrDie(cfg))
	return cfg
}

func stopControlPlane() error {
	controlPlane.mu.Lock()
	defer controlPlane.mu.Unlock()
	env := controlPlane.env
	controlPlane.env, controlPlane.cfg = nil, nil
	if env == nil {
		return nil
	}
	return env.Stop()
}

// emptyCluster deletes every pod, node and RuntimeClass, and waits until
// the apiserver has none left. Pods go with grace period 0: no kubelet
// runs to finish a graceful deletion.
func emptyCluster(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	var zero int64
	now := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	namespaces, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("emptying the cluster: %v", err)
	}
	for _, ns := range namespaces.Items {
		if err := client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, now, metav1.ListOptions{}); err != nil {
			t.Fatalf("emptying the cluster: %v", err)
		}
	}
	if err := client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("emptying the cluster: %v", err)
	}
	if err := client.NodeV1().RuntimeClasses().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("emptying the cluster: %v", err)
	}
	waitFor(ctx, t, "an empty cluster", func() (bool, error) {
		pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 0 && len(nodes.Items) == 0, nil
	})
}

// writeKubeconfig writes cfg as a kubeconfig file: kube-scheduler reads
// where the apiserver is from its configuration's
// clientConnection.kubeconfig.
func writeKubeconfig(t *testing.T, cfg *restclient.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// schedulerConfig is one of the chapter's configurations (config/NAME)
// with what a test adds: where the apiserver is, the client's rate, and
// the plugins' args the test sets (merged over the file's, by plugin).
func schedulerConfig(t *testing.T, name, kubeconfig string, args map[string]map[string]any) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", name))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("config/%s: %v", name, err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig, "qps": 500, "burst": 1000}
	profile := cfg["profiles"].([]any)[0].(map[string]any)
	for plugin, a := range args {
		var pcs []any
		if pc, ok := profile["pluginConfig"].([]any); ok {
			pcs = pc
		}
		found := false
		for _, pc := range pcs {
			pc := pc.(map[string]any)
			if pc["name"] == plugin {
				found = true
				old, _ := pc["args"].(map[string]any)
				if old == nil {
					old = map[string]any{}
				}
				for k, v := range a {
					old[k] = v
				}
				pc["args"] = old
			}
		}
		if !found {
			pcs = append(pcs, map[string]any{"name": plugin, "args": a})
		}
		profile["pluginConfig"] = pcs
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runScheduler runs kube-scheduler v1.37.1 with the chapter's plugins in
// the test's process, from a configuration file, until the test ends: what
// main.go runs, without the command line around it. It mirrors
// StartTestServer in cmd/kube-scheduler/app/testing/testserver.go, which
// cannot take out-of-tree plugins: options.NewOptions, the flags, then
// app.Setup with registry.Options and app.Run. Its HTTPS server is off
// (--secure-port=0): the tests read the apiserver.
//
// It takes no flags but these two. A --feature-gates flag would set only
// the copy of the gates registered below, while kube-scheduler and the
// plugins read the process's (utilfeature.DefaultFeatureGate):
// StartTestServer copies them back (SetFeatureGatesDuringTest), and a test
// that needs a gate would set it that way.
func runScheduler(ctx context.Context, t *testing.T, configFile string) {
	t.Helper()
	// A component registry of its own, as StartTestServer builds one: the
	// kube component, on a copy of the process's feature gates.
	gate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	version := utilcompatibility.DefaultKubeEffectiveVersionForTest()
	version.SetEmulationVersion(gate.EmulationVersion())
	version.SetMinCompatibilityVersion(gate.MinCompatibilityVersion())
	globals := compatibility.NewComponentGlobalsRegistry()
	if err := globals.Register(compatibility.DefaultKubeComponent, version, gate); err != nil {
		t.Fatal(err)
	}
	opts := options.NewOptionsWithComponentGlobalsRegistry(globals)
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse([]string{"--config=" + configFile, "--secure-port=0"}); err != nil {
		t.Fatal(err)
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	cc, sched, err := app.Setup(ctx, opts, registry.Options()...)
	if err != nil {
		cancel()
		t.Fatalf("app.Setup: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		// app.Run returns only with an error: "finished without leader
		// elect" once the test cancels ctx. Before that, it failed.
		err := app.Run(ctx, cc, sched)
		if ctx.Err() == nil {
			t.Errorf("app.Run ended before the test: %v", err)
		}
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		// app.Run registers the configuration under /configz; the next
		// test's scheduler registers its own.
		configz.Delete("componentconfig")
	})
}

// waitFor polls cond until it holds. The timeout only bounds how long a
// failing test waits; passing tests never reach it.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (last error: %v)", what, lastErr)
}

// waitBound waits until the pod has a node, and returns it.
func waitBound(ctx context.Context, t *testing.T, client kubernetes.Interface, namespace, name string) string {
	t.Helper()
	var node string
	waitFor(ctx, t, "pod "+name+" to be bound", func() (bool, error) {
		p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	return node
}
