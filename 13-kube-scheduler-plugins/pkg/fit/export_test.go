package fit

import v1 "k8s.io/api/core/v1"

// PodRequests lets the external tests compare podRequests with
// component-helpers' PodRequests directly.
func PodRequests(pod *v1.Pod, podLevel bool, nonMissing v1.ResourceList) v1.ResourceList {
	return podRequests(pod, requestOptions{podLevel: podLevel, nonMissing: nonMissing})
}

// DefaultRequests are the requests scoring gives a container that names none.
var DefaultRequests = defaultRequests
