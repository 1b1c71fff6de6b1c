// Command pin keeps every go.mod and go.work in step with
// scripts/versions.env, the one place versions are stated.
//
//	go run ./scripts/cmd/pin          rewrite what disagrees (make pin)
//	go run ./scripts/cmd/pin -check   report what disagrees, exit 1 (make verify)
//
// It checks, in every module (each chapter, scripts, scripts/tools): the go
// directive; a replace block that maps every k8s.io staging module (read from
// k8s.io/kubernetes' own go.mod) to the pinned staging version, and nothing
// else; and the required versions of k8s.io/kubernetes, the staging modules,
// controller-runtime, kwok and etcd. In go.work it checks that every chapter
// and scripts are used, and scripts/tools is not.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

func main() {
	check := flag.Bool("check", false, "report disagreements and exit 1 instead of fixing them")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	problems, err := run(*root, *check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pin: "+err.Error())
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "pin: "+p)
	}
	if *check && len(problems) > 0 {
		fmt.Fprintln(os.Stderr, "pin: run `make pin` to rewrite them from scripts/versions.env")
		os.Exit(1)
	}
}

// versions is scripts/versions.env.
type versions map[string]string

func readVersions(path string) (versions, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := versions{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not KEY=VALUE", path, line)
		}
		v[k] = val
	}
	for _, k := range []string{"GO_VERSION", "KUBERNETES_VERSION", "STAGING_VERSION", "ETCD_VERSION", "CONTROLLER_RUNTIME_VERSION", "KWOK_VERSION"} {
		if v[k] == "" {
			return nil, fmt.Errorf("%s: %s is not set", path, k)
		}
	}
	return v, sc.Err()
}

// stagingModules reads the replace block of k8s.io/kubernetes' go.mod at the
// pinned version: the modules that live in its staging directory.
func stagingModules(dir, version string) ([]string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+version)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes@%s: %w", version, err)
	}
	var info struct{ GoMod string }
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(info.GoMod)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(info.GoMod, data, nil)
	if err != nil {
		return nil, err
	}
	var mods []string
	for _, r := range f.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") {
			mods = append(mods, r.Old.Path)
		}
	}
	sort.Strings(mods)
	if len(mods) == 0 {
		return nil, errors.New("k8s.io/kubernetes' go.mod replaces no staging module")
	}
	return mods, nil
}

var chapterDir = regexp.MustCompile(`^(0[1-9]|1[0-9])-[a-z-]+$`)

// modules lists the go.mod files: the chapters, scripts and scripts/tools.
func modules(root string) (chapters []string, all []string, err error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if e.IsDir() && chapterDir.MatchString(e.Name()) {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "go.mod")); err == nil {
				chapters = append(chapters, e.Name())
			}
		}
	}
	all = append(append([]string{}, chapters...), "scripts", "scripts/tools")
	return chapters, all, nil
}

func run(root string, check bool) ([]string, error) {
	v, err := readVersions(filepath.Join(root, "scripts", "versions.env"))
	if err != nil {
		return nil, err
	}
	staging, err := stagingModules(filepath.Join(root, "scripts", "tools"), v["KUBERNETES_VERSION"])
	if err != nil {
		return nil, err
	}
	want := map[string]string{
		"k8s.io/kubernetes":              v["KUBERNETES_VERSION"],
		"sigs.k8s.io/controller-runtime": v["CONTROLLER_RUNTIME_VERSION"],
		"sigs.k8s.io/kwok":               v["KWOK_VERSION"],
	}
	for _, m := range staging {
		want[m] = v["STAGING_VERSION"]
	}
	for _, m := range []string{"api/v3", "client/pkg/v3", "client/v3", "pkg/v3", "server/v3"} {
		want["go.etcd.io/etcd/"+m] = v["ETCD_VERSION"]
	}
	chapters, mods, err := modules(root)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, dir := range mods {
		p, err := pinModule(filepath.Join(root, dir, "go.mod"), v["GO_VERSION"], staging, want, check)
		if err != nil {
			return nil, err
		}
		problems = append(problems, p...)
	}
	p, err := pinWork(filepath.Join(root, "go.work"), v["GO_VERSION"], chapters, check)
	if err != nil {
		return nil, err
	}
	return append(problems, p...), nil
}

func pinModule(path, goVersion string, staging []string, want map[string]string, check bool) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		return nil, err
	}
	var problems []string
	if f.Go == nil || f.Go.Version != goVersion {
		problems = append(problems, fmt.Sprintf("%s: go directive is not %s", path, goVersion))
		if err := f.AddGoStmt(goVersion); err != nil {
			return nil, err
		}
	}
	for _, r := range f.Require {
		if w, ok := want[r.Mod.Path]; ok && r.Mod.Version != w {
			problems = append(problems, fmt.Sprintf("%s: requires %s %s, want %s", path, r.Mod.Path, r.Mod.Version, w))
			if err := f.AddRequire(r.Mod.Path, w); err != nil {
				return nil, err
			}
		}
	}
	var have []string
	for _, r := range f.Replace {
		have = append(have, fmt.Sprintf("%s => %s %s", r.Old.Path, r.New.Path, r.New.Version))
	}
	var wantReplace []string
	for _, m := range staging {
		wantReplace = append(wantReplace, fmt.Sprintf("%s => %s %s", m, m, want[m]))
	}
	sort.Strings(have)
	if !slices.Equal(have, wantReplace) {
		problems = append(problems, fmt.Sprintf("%s: the replace block does not map every staging module to %s", path, want[staging[0]]))
	}
	if !check {
		// Rebuilt every time, so the block always sits last, in one order.
		for _, r := range slices.Clone(f.Replace) {
			if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return nil, err
			}
		}
	}
	if check {
		return problems, nil
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return nil, err
	}
	// modfile adds replaces one line each; write them as one block.
	block := "\n// Every k8s.io staging module at the version k8s.io/kubernetes was\n// released with, as k8s.io/kubernetes' own go.mod does (see\n// scripts/versions.env; `make pin` rewrites this block).\nreplace (\n"
	for _, m := range staging {
		block += fmt.Sprintf("\t%s => %s %s\n", m, m, want[m])
	}
	out = append(out, block+")\n"...)
	if string(out) == string(data) {
		return problems, nil
	}
	return problems, os.WriteFile(path, out, 0o644)
}

func pinWork(path, goVersion string, chapters []string, check bool) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := modfile.ParseWork(path, data, nil)
	if err != nil {
		return nil, err
	}
	var problems []string
	if f.Go == nil || f.Go.Version != goVersion {
		problems = append(problems, fmt.Sprintf("%s: go directive is not %s", path, goVersion))
		if err := f.AddGoStmt(goVersion); err != nil {
			return nil, err
		}
	}
	var have []string
	for _, u := range f.Use {
		have = append(have, strings.TrimPrefix(u.Path, "./"))
	}
	wantUse := append(append([]string{}, chapters...), "scripts")
	sort.Strings(have)
	sort.Strings(wantUse)
	if !slices.Equal(have, wantUse) {
		problems = append(problems, fmt.Sprintf("%s: uses %v, want every chapter and scripts (and never scripts/tools): %v", path, have, wantUse))
		for _, u := range slices.Clone(f.Use) {
			if err := f.DropUse(u.Path); err != nil {
				return nil, err
			}
		}
		for _, u := range wantUse {
			if err := f.AddUse("./"+u, ""); err != nil {
				return nil, err
			}
		}
	}
	if check || len(problems) == 0 {
		return problems, nil
	}
	f.Cleanup()
	return problems, os.WriteFile(path, modfile.Format(f.Syntax), 0o644)
}
