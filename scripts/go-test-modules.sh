#!/usr/bin/env bash
# go-test-modules.sh JOBS MODULE...: runs `go test -race` in every module, JOBS
# modules at a time, and prints each module's output whole when it is done,
# framed by stage.sh (so the lines of two modules never interleave).
#
# Why two at a time: one module's `go test` keeps about one of the two cores
# busy. Its integration package spends most of its time waiting on the
# apiserver and on backoff timers, alone at the end of the run, while the
# unit packages are long done. A second module fills that gap; the tests
# assert on events and state, never on speed (DESIGN.md), so sharing the
# cores changes how long they take, not what they say.
#
# Every module runs even after one fails, so that one run shows every
# failure; the exit status is non-zero if any failed.
set -uo pipefail
jobs="$1"; shift
here="$(cd "$(dirname "$0")" && pwd)"
logs="$(mktemp -d)"
trap 'rm -rf "${logs}"' EXIT

run() { # run MODULE: one module's tests, framed, into its log
  local m="$1"
  bash "${here}/stage.sh" "go test ${m}" env -C "${m}" GOWORK=off go test -race -count=1 -ldflags=-w ./... \
    >"${logs}/${m//\//_}.log" 2>&1
}

declare -A pids=()
failed=()
# finish_one waits for any running module, prints its log and notes a failure.
finish_one() {
  local done_pid m
  wait -n -p done_pid "${!pids[@]}"
  local rc=$?
  m="${pids[${done_pid}]}"
  unset "pids[${done_pid}]"
  cat "${logs}/${m//\//_}.log"
  (( rc == 0 )) || failed+=("${m}")
}

for m in "$@"; do
  while (( ${#pids[@]} >= jobs )); do finish_one; done
  run "${m}" &
  pids[$!]="${m}"
done
while (( ${#pids[@]} > 0 )); do finish_one; done

if (( ${#failed[@]} > 0 )); then
  echo "go test failed in: ${failed[*]}"
  exit 1
fi
