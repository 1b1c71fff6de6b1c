#!/usr/bin/env bash
# go-test-modules.sh JOBS MODULE...: runs `go test -race` in every module, JOBS
# modules at a time (parallel.sh), each framed by stage.sh and printed whole
# when it is done.
#
# Why two at a time: one module's `go test` keeps about one of the two cores
# busy. Its integration package spends most of its time waiting on the
# apiserver and on backoff timers, alone at the end of the run, while the
# unit packages are long done. A second module fills that gap; the tests
# assert on events and state, never on speed (DESIGN.md), so sharing the
# cores changes how long they take, not what they say.
set -uo pipefail
jobs="$1"; shift
here="$(cd "$(dirname "$0")" && pwd)"
cmds=()
# GO_TEST_SKIP, if set, is a -skip pattern (the Makefile leaves out the
# browser tests on a machine without Chromium, and says so).
skip=()
[[ -n "${GO_TEST_SKIP:-}" ]] && skip=(-skip "${GO_TEST_SKIP}")
for m in "$@"; do
  printf -v cmd '%q ' bash "${here}/stage.sh" "go test ${m}" env -C "${m}" GOWORK=off go test -race -count=1 -ldflags=-w ${skip[@]+"${skip[@]}"} ./...
  cmds+=("${cmd}")
done
exec bash "${here}/parallel.sh" "${jobs}" "${cmds[@]}"
