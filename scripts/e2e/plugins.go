package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// PluginsChapter is chapter 13: not a mini scheduler but kube-scheduler
// v1.37.1 built with the chapter's plugins. Its command line is
// kube-scheduler's, not the chapters' contract: a configuration file
// says which plugins run and where the apiserver is. The harness adapts
// to it (PluginsScheduler); the chapter does not adapt to the harness.
const PluginsChapter = 13

// PluginsDir is chapter 13's folder.
const PluginsDir = "13-kube-scheduler-plugins"

// PluginsConfigs are the configurations chapter 13 ships, in
// 13-kube-scheduler-plugins/config/NAME.yaml. The harness runs it with
// DefaultPluginsConfig unless told otherwise.
var PluginsConfigs = []string{"random", "nodecost", "fit"}

// DefaultPluginsConfig is the configuration the harness runs chapter 13
// with: upstream's default profile with NodeCost added, which places
// every pod that does not ask for NodeCost as kube-scheduler's defaults do.
const DefaultPluginsConfig = "nodecost"

// PluginsScheduler returns how to run chapter 13's binary with one of its
// configurations: the chapter's file, with the harness's client (the
// cluster's kubeconfig, QPS and burst), leader election off and the
// chapters' scheduler name, written to dir once per cluster; its HTTPS
// server on the runner's address, /metrics and /healthz open to anonymous
// requests, as the harness runs kube-scheduler (upstreamScheduler). flags
// are kube-scheduler's (-v, --vmodule, --feature-gates).
func PluginsScheduler(root, dir, bin, config string, client Client, flags ...string) (Scheduler, error) {
	data, err := readPluginsConfig(root, config)
	if err != nil {
		return Scheduler{}, err
	}
	return Scheduler{
		Chapter:       PluginsChapter,
		Label:         fmt.Sprintf("%s (%s)", PluginsDir, config),
		KubeScheduler: true,
		Command:       append([]string{bin}, flags...),
		Args: func(kubeconfig, addr string, extra []string) []string {
			settings, flags := kubeSchedulerSettings(extra)
			out, err := pluginsConfig(data, kubeconfig, client, settings)
			if err != nil {
				panic(err) // readPluginsConfig checked it
			}
			cfg := filepath.Join(dir, filepath.Base(filepath.Dir(kubeconfig))+"-"+PluginsDir+"-"+config+".yaml")
			if err := os.WriteFile(cfg, out, 0o644); err != nil {
				panic(err) // the directory was created by the caller
			}
			host, port, _ := strings.Cut(addr, ":")
			return append([]string{"--config=" + cfg, "--authentication-skip-lookup=true", "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*",
				"--bind-address=" + host, "--secure-port=" + port}, flags...)
		},
	}, nil
}

// WritePluginsConfig writes chapter 13's configuration `config`, with the
// cluster's kubeconfig and the client given, to path: the file make demo
// CHAPTER=13 runs the chapter with, and prints for the reader to run again.
func WritePluginsConfig(root, config, kubeconfig, path string, client Client) error {
	data, err := readPluginsConfig(root, config)
	if err != nil {
		return err
	}
	out, err := pluginsConfig(data, kubeconfig, client, nil)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// readPluginsConfig reads one of chapter 13's configurations and checks
// that the harness can complete it.
func readPluginsConfig(root, config string) ([]byte, error) {
	file := filepath.Join(root, PluginsDir, "config", config+".yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("chapter %d has no configuration %q (%s): it has %s", PluginsChapter, config, file, strings.Join(PluginsConfigs, ", "))
	}
	if _, err := pluginsConfig(data, "kubeconfig", ChapterClient, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return data, nil
}

// kubeSchedulerSettings splits a scenario's schedulerArgs, which are the
// chapters' flags, into what kube-scheduler takes in its configuration
// (--parallelism=N is the top-level parallelism) and the flags it takes
// as they are.
func kubeSchedulerSettings(extra []string) (map[string]any, []string) {
	settings := map[string]any{}
	var flags []string
	for _, a := range extra {
		if v, ok := strings.CutPrefix(a, "--parallelism="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				settings["parallelism"] = n
				continue
			}
		}
		flags = append(flags, a)
	}
	return settings, flags
}

// pluginsConfig is a chapter 13 configuration with the harness's client,
// leader election off, every profile answering to the chapters'
// scheduler name, and the top-level settings given.
func pluginsConfig(data []byte, kubeconfig string, client Client, settings map[string]any) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, err
	}
	if cfg["kind"] != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("not a KubeSchedulerConfiguration (kind %v)", cfg["kind"])
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig, "qps": client.QPS, "burst": client.Burst}
	cfg["leaderElection"] = map[string]any{"leaderElect": false}
	profiles, _ := cfg["profiles"].([]any)
	if len(profiles) != 1 {
		return nil, fmt.Errorf("%d profiles, want 1", len(profiles))
	}
	p, ok := profiles[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("profiles[0] is not a profile")
	}
	p["schedulerName"] = DefaultSchedulerName
	for k, v := range settings {
		cfg[k] = v
	}
	return yaml.Marshal(cfg)
}
