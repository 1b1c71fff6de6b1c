package deploy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"minisched/scripts/e2e"
)

const (
	manifest = "../../docs/deploy/08-queueinghint.yaml"
	// pluginsManifest runs chapter 13 as a second kube-scheduler.
	pluginsManifest = "../../docs/deploy/13-kube-scheduler-plugins.yaml"
	schedulerName   = "mini-scheduler"
)

// assetsDir is where etcd, kube-apiserver and kubectl are: KUBEBUILDER_ASSETS,
// which the Makefile sets, else the tools directory.
func assetsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "tools", "bin"))
	}
	for _, bin := range []string{"etcd", "kube-apiserver", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			t.Fatalf("%s not found in %s: run `make tools` (make test does) or set KUBEBUILDER_ASSETS", bin, dir)
		}
	}
	return dir
}

// clusterRole reads the ClusterRole of the manifest.
func clusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s has no ClusterRole", manifest)
		}
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind == "ClusterRole" {
			var role rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict(doc, &role); err != nil {
				t.Fatal(err)
			}
			return &role
		}
	}
}

// writeKubeconfig writes cfg as a kubeconfig file.
func writeKubeconfig(t *testing.T, cfg *restclient.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// outcome is what the scheduler got done in a namespace: a pod that fits
// is bound, a pod that fits nowhere has PodScheduled=False, and that pod
// has a FailedScheduling event.
type outcome struct {
	Bound, Condition, Event bool
}

func observe(ctx context.Context, admin kubernetes.Interface, ns string) (outcome, error) {
	var o outcome
	fits, err := admin.CoreV1().Pods(ns).Get(ctx, "fits", metav1.GetOptions{})
	if err != nil {
		return o, err
	}
	o.Bound = fits.Spec.NodeName != ""
	big, err := admin.CoreV1().Pods(ns).Get(ctx, "too-big", metav1.GetOptions{})
	if err != nil {
		return o, err
	}
	o.Condition = slices.ContainsFunc(big.Status.Conditions, func(c v1.PodCondition) bool {
		return c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse
	})
	events, err := admin.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return o, err
	}
	o.Event = slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool { return e.Reason == "FailedScheduling" })
	return o, nil
}

// TestLeastPrivilege runs chapter 08 as a user that has exactly the
// manifest's ClusterRole and nothing else, then once per rule with that
// rule removed. With the whole role the scheduler does all its work; each
// missing rule breaks the part of it that the rule exists for.
func TestLeastPrivilege(t *testing.T) {
	assets := assetsDir(t)
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	// As in the chapters' integration tests: no node lifecycle controller,
	// no ServiceAccount controller.
	env.ControlPlane.GetAPIServer().Configure().Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition")
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(cfg)
	// dryRun applies a manifest with kubectl --dry-run=server and returns
	// what kubectl printed.
	dryRun := func(t *testing.T, file string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", writeKubeconfig(t, cfg), "apply", "--dry-run=server", "-f", file)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl apply --dry-run=server -f %s: %v\n%s%s", file, err, out, stderr.String())
		}
		return string(out)
	}

	t.Run("the manifests pass a server-side dry-run", func(t *testing.T) {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "minisched"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		out := dryRun(t, manifest)
		// The namespace exists already (objects in a namespace that does
		// not exist fail a dry run), created without kubectl's annotation.
		want := "namespace/minisched configured (server dry run)\n" +
			"serviceaccount/mini-scheduler created (server dry run)\n" +
			"clusterrole.rbac.authorization.k8s.io/minisched:mini-scheduler created (server dry run)\n" +
			"clusterrolebinding.rbac.authorization.k8s.io/minisched:mini-scheduler created (server dry run)\n" +
			"deployment.apps/mini-scheduler created (server dry run)\n"
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("kubectl output (-want, +got):\n%s", diff)
		}
	})

	t.Run("chapter 13's manifest passes a server-side dry-run", func(t *testing.T) {
		// kube-scheduler's own roles, which it binds to, exist: the
		// apiserver's RBAC bootstrap policy creates them at start.
		out := dryRun(t, pluginsManifest)
		want := "namespace/minisched configured (server dry run)\n" +
			"serviceaccount/kube-scheduler-plugins created (server dry run)\n" +
			"clusterrolebinding.rbac.authorization.k8s.io/minisched:kube-scheduler-plugins:kube-scheduler created (server dry run)\n" +
			"clusterrolebinding.rbac.authorization.k8s.io/minisched:kube-scheduler-plugins:volume-scheduler created (server dry run)\n" +
			"rolebinding.rbac.authorization.k8s.io/minisched:kube-scheduler-plugins:authentication-reader created (server dry run)\n" +
			"configmap/kube-scheduler-plugins created (server dry run)\n" +
			"deployment.apps/kube-scheduler-plugins created (server dry run)\n"
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("kubectl output (-want, +got):\n%s", diff)
		}
		for _, role := range []string{"system:kube-scheduler", "system:volume-scheduler"} {
			if _, err := admin.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); err != nil {
				t.Errorf("the manifest binds %s: %v", role, err)
			}
		}
	})

	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node"}}
	node, err = admin.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
	node.Status.Capacity = node.Status.Allocatable
	if _, err := admin.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	bin := buildChapter(t)
	role := clusterRole(t)

	tests := []struct {
		name    string
		without int // index of the rule left out, -1 for none
		want    outcome
		// refused is what the scheduler logs when the apiserver refuses
		// it the rule (klog escapes the quotes of the error it quotes):
		// the case is decided once it is logged and the rest of the work
		// is done, without waiting out a timeout.
		refused string
	}{
		{"the whole role: every part of the work is done", -1, outcome{Bound: true, Condition: true, Event: true}, ""},
		// Without the pod informer the scheduler never starts scheduling.
		{"without list and watch on pods: nothing is done", 0, outcome{}, `cannot list resource \"pods\"`},
		{"without list and watch on nodes: nothing is done", 1, outcome{}, `cannot list resource \"nodes\"`},
		{"without create on pods/binding: no pod is bound", 2, outcome{Condition: true, Event: true}, `cannot create resource \"pods/binding\"`},
		{"without patch on pods/status: no PodScheduled condition", 3, outcome{Bound: true, Event: true}, `cannot patch resource \"pods/status\"`},
		{"without events: no FailedScheduling event", 4, outcome{Bound: true, Condition: true}, `cannot create resource \"events\"`},
	}
	if len(role.Rules) != len(tests)-1 {
		t.Fatalf("the ClusterRole has %d rules; this test checks %d", len(role.Rules), len(tests)-1)
	}
	var whole time.Duration // how long the whole role took
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := fmt.Sprintf("mini-scheduler-%d", i)
			rules := slices.Clone(role.Rules)
			if tt.without >= 0 {
				rules = slices.Delete(rules, tt.without, tt.without+1)
			}
			grant(ctx, t, admin, user, rules)
			authn, err := env.AddUser(envtest.User{Name: user}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ns := fmt.Sprintf("case-%d", i)
			if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			for name, cpu := range map[string]string{"fits": "100m", "too-big": "64"} {
				pod := &v1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
					Spec: v1.PodSpec{SchedulerName: schedulerName, Containers: []v1.Container{{
						Name: "c", Image: "registry.k8s.io/pause:3.10",
						Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
					}}},
				}
				if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			started := time.Now()
			logs, stop := runScheduler(t, bin, writeKubeconfig(t, authn.Config()))
			defer stop()
			// Wait until the expected work is done and the refusal logged.
			// The timeout only bounds a failing case: a part done that
			// should not be, or a refusal never logged.
			var got outcome
			_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				o, err := observe(ctx, admin, ns)
				if err != nil {
					return false, err
				}
				got = o
				return o == tt.want && strings.Contains(logs.String(), tt.refused), nil
			})
			if tt.without < 0 {
				whole = time.Since(started)
			}
			// Without an informer, the rest of the role would still let
			// the scheduler bind, patch and record: nothing stops it but
			// waiting for its caches. Watch that nothing comes for five
			// times what the whole role took (2 s at least).
			if tt.want == (outcome{}) {
				_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, max(5*whole, 2*time.Second), true, func(ctx context.Context) (bool, error) {
					o, err := observe(ctx, admin, ns)
					if err == nil {
						got = o
					}
					return got != outcome{}, nil
				})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("what the scheduler got done (-want, +got):\n%s", diff)
			}
			if !strings.Contains(logs.String(), tt.refused) {
				t.Errorf("the scheduler never logged %q", tt.refused)
			}
		})
	}
}

// grant binds user to a ClusterRole with rules and nothing else.
func grant(ctx context.Context, t *testing.T, admin kubernetes.Interface, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// buildChapter builds chapter 08 with the race detector as the e2e suite
// does, into the same cache (relinked only when the chapter changed), and
// returns the test's own hard link to it.
func buildChapter(t *testing.T) string {
	t.Helper()
	bin, err := e2e.BuildChapterWith(filepath.Join("..", ".."), e2e.Chapter{Number: 8, Dir: "08-queueinghint"}, t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// runScheduler starts the scheduler with kubeconfig and returns its log so
// far and a function that stops it. The log goes to the test's log if the
// test fails.
func runScheduler(t *testing.T, bin, kubeconfig string) (*syncBuffer, func()) {
	t.Helper()
	logs := &syncBuffer{}
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, "--metrics-bind-address", "127.0.0.1:0", "-v=2")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return logs, func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("scheduler log:\n%s", logs.String())
		}
	}
}

// syncBuffer is a bytes.Buffer the scheduler's output goroutines write to
// while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
