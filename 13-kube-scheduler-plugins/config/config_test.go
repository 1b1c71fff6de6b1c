// Package config_test checks the configurations the chapter ships: each
// loads as kube-scheduler loads it, builds upstream's framework with the
// chapter's registry, and runs exactly the plugins its comment says, in
// the order kube-scheduler's defaults run theirs.
package config_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"minisched/13-kube-scheduler-plugins/internal/plugintest"
)

// points are a profile's plugin lists, by extension point, as the
// framework built them.
func points(p *config.Plugins) map[string][]string {
	names := func(s config.PluginSet) []string {
		var out []string
		for _, pl := range s.Enabled {
			out = append(out, pl.Name)
		}
		return out
	}
	return map[string][]string{
		"PreEnqueue": names(p.PreEnqueue), "QueueSort": names(p.QueueSort), "PreFilter": names(p.PreFilter),
		"Filter": names(p.Filter), "PostFilter": names(p.PostFilter), "PreScore": names(p.PreScore),
		"Score": names(p.Score), "Reserve": names(p.Reserve), "Permit": names(p.Permit),
		"PreBind": names(p.PreBind), "Bind": names(p.Bind), "PostBind": names(p.PostBind),
	}
}

// weights are the Score plugins' weights.
func weights(p *config.Plugins) map[string]int32 {
	out := map[string]int32{}
	for _, pl := range p.Score.Enabled {
		out[pl.Name] = pl.Weight
	}
	return out
}

func TestConfigurations(t *testing.T) {
	logger, ctx := ktesting.NewTestContext(t)
	load := func(t *testing.T, file string) *config.Plugins {
		profile := plugintest.LoadProfile(t, logger, file)
		if profile.SchedulerName != "mini-scheduler" {
			t.Errorf("%s: scheduler name %q, want mini-scheduler", file, profile.SchedulerName)
		}
		return plugintest.NewFramework(ctx, t, profile, nil, nil).ListPlugins()
	}
	defaults := load(t, plugintest.WriteConfig(t, "profiles:\n- schedulerName: mini-scheduler\n"))
	replace := func(l []string, old, new string) []string {
		out := slices.Clone(l)
		if i := slices.Index(out, old); i >= 0 {
			out[i] = new
		}
		return out
	}

	t.Run("fit.yaml: the defaults with Fit in NodeResourcesFit's place", func(t *testing.T) {
		got := load(t, "fit.yaml")
		want := map[string][]string{}
		for point, l := range points(defaults) {
			want[point] = replace(l, "NodeResourcesFit", "Fit")
		}
		// Fit comes last at PreFilter, PreScore and Score, where the order
		// changes nothing: its PreFilter never rejects a pod (neither does
		// NodeResourcesFit's, Fit.PreFilter in noderesources/fit.go), each
		// PreScore plugin computes its own state, and the Score plugins'
		// weighted scores are summed. Only Filter stops at the first
		// rejection, and there fit.yaml keeps NodeResourcesFit's slot.
		for _, point := range []string{"PreFilter", "PreScore", "Score"} {
			want[point] = append(slices.DeleteFunc(slices.Clone(want[point]), func(s string) bool { return s == "Fit" }), "Fit")
		}
		if diff := cmp.Diff(want, points(got)); diff != "" {
			t.Errorf("plugins (-want +got):\n%s", diff)
		}
		wantWeights := weights(defaults)
		wantWeights["Fit"] = wantWeights["NodeResourcesFit"]
		delete(wantWeights, "NodeResourcesFit")
		if diff := cmp.Diff(wantWeights, weights(got)); diff != "" {
			t.Errorf("weights (-want +got):\n%s", diff)
		}
	})

	t.Run("nodecost.yaml: the defaults and NodeCost", func(t *testing.T) {
		got := load(t, "nodecost.yaml")
		want := points(defaults)
		want["PreScore"] = append(want["PreScore"], "NodeCost")
		want["Score"] = append(want["Score"], "NodeCost")
		if diff := cmp.Diff(want, points(got)); diff != "" {
			t.Errorf("plugins (-want +got):\n%s", diff)
		}
		if w := weights(got)["NodeCost"]; w != 5 {
			t.Errorf("NodeCost's weight is %d, want 5", w)
		}
	})

	t.Run("random.yaml: the defaults with Random as the only scorer", func(t *testing.T) {
		got := load(t, "random.yaml")
		want := points(defaults)
		want["PreScore"] = []string{"Random"}
		want["Score"] = []string{"Random"}
		want["Reserve"] = append(want["Reserve"], "Random")
		want["PostBind"] = append(want["PostBind"], "Random")
		if diff := cmp.Diff(want, points(got)); diff != "" {
			t.Errorf("plugins (-want +got):\n%s", diff)
		}
	})
}
