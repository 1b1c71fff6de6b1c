#!/usr/bin/env bash
# go-test-modules.sh JOBS MODULE...: runs every module's tests with the race
# detector (scripts/cmd/gotest: go test -race -count=1 ./..., with the test
# binaries kept under .cache/testbin so that a warm run links only what
# changed), JOBS modules at a time (parallel.sh), each framed by stage.sh and
# printed whole when it is done.
#
# Why two at a time: one module's tests keep about one of the two cores
# busy. Its integration package spends most of its time waiting on the
# apiserver and on backoff timers, while the unit packages are long done. A
# second module fills that gap; the tests assert on events and state, never
# on speed (DESIGN.md), so sharing the cores changes how long they take, not
# what they say.
set -uo pipefail
jobs="$1"; shift
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "${here}")"
gotest="${root}/.cache/bin/gotest"
if ! out="$(env -C "${here}" GOWORK=off go build -o "${gotest}" ./cmd/gotest 2>&1)"; then
  echo "building scripts/cmd/gotest: ${out}"
  exit 1
fi
cmds=()
# GO_TEST_SKIP, if set, is a -skip pattern (the Makefile leaves out the
# browser tests on a machine without Chromium, and says so).
for m in "$@"; do
  printf -v cmd '%q ' bash "${here}/stage.sh" "go test ${m}" env GOWORK=off "${gotest}" -C "${root}/${m}" -bin "${root}/.cache/testbin/${m}" -skip "${GO_TEST_SKIP:-}"
  cmds+=("${cmd}")
done
exec bash "${here}/parallel.sh" "${jobs}" "${cmds[@]}"
