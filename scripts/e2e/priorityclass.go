package e2e

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// CreatePriorityClass creates pc and returns once kube-apiserver admits
// pods of it in namespace ns.
//
// The Priority admission plugin reads a pod's priorityClassName from its
// informer's lister (resolvePriorityClass in kube-apiserver's
// plugin/pkg/admission/priority/admission.go), which learns of a new class
// a moment after it is created. A pod created in that moment is refused
// with "no PriorityClass with name ... was found": a run failed so once.
// A pod created with a server-side dry run goes through admission and is
// never stored, so no scheduler sees it: once one is admitted, the class
// is known.
func CreatePriorityClass(ctx context.Context, client kubernetes.Interface, ns string, pc *schedulingv1.PriorityClass) error {
	if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating priority class %s: %w", pc.Name, err)
	}
	probe := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "priority-class-probe-"},
		Spec: v1.PodSpec{
			PriorityClassName: pc.Name,
			Containers:        []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = client.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsForbidden(last) {
			return false, nil // not known to the admission plugin yet
		}
		return last == nil, last
	})
	if err != nil {
		return fmt.Errorf("priority class %s: pods of it were not admitted: %w (last: %v)", pc.Name, err, last)
	}
	return nil
}
