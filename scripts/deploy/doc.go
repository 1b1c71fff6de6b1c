// Package deploy holds the test of docs/deploy/08-queueinghint.yaml, the
// manifests that run chapter 08 as a second scheduler in a real cluster:
// the file passes a server-side dry-run, and the scheduler does its work
// under exactly the ClusterRole it grants, and under no less.
package deploy
