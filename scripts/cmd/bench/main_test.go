package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"minisched/scripts/bench"
	"minisched/scripts/docsgen"
)

// TestReadPartial checks what --resume accepts: the saved rounds of a full
// run of the same sizes on this machine, and nothing else.
func TestReadPartial(t *testing.T) {
	o := options{runs: 3, docs: true, basic: bench.Config{Nodes: 100, Pods: 2000}, preemption: bench.PreemptionConfig{Nodes: 1000}}
	saved := bench.Report{Date: "2026-11-27 06:16 UTC", Machine: docsgen.Machine(), Runs: 3, Basic: o.basic, Preemption: o.preemption,
		BasicRuns: [][]bench.Result{{{Name: "08-queueinghint"}}}}
	tests := []struct {
		name    string
		edit    func(r *bench.Report, o *options)
		wantErr string
	}{
		{name: "the same run", edit: func(*bench.Report, *options) {}},
		{name: "not a full run", edit: func(_ *bench.Report, o *options) { o.docs = false }, wantErr: "goes with --docs"},
		{name: "another machine", edit: func(r *bench.Report, _ *options) { r.Machine = "a laptop" }, wantErr: "not on this machine"},
		{name: "other sizes", edit: func(_ *bench.Report, o *options) { o.preemption.Nodes = 500 }, wantErr: "other sizes"},
		{name: "other runs", edit: func(_ *bench.Report, o *options) { o.runs = 5 }, wantErr: "another number of runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, opts := saved, o
			tt.edit(&r, &opts)
			dir := t.TempDir()
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "results.partial.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readPartial(dir, opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.BasicRuns) != 1 || got.BasicRuns[0][0].Name != "08-queueinghint" {
				t.Errorf("rounds %+v, want the one saved", got.BasicRuns)
			}
		})
	}
}
