#!/usr/bin/env bash
# parallel.sh JOBS COMMAND...: runs each COMMAND (a bash command line), JOBS
# at a time, and prints each one's output whole when it is done, so that the
# lines of two commands never interleave. Every command runs even after one
# fails, so that one run shows every failure; the exit status is non-zero if
# any failed, and the failed commands are named.
set -uo pipefail
jobs="$1"; shift
logs="$(mktemp -d)"
trap 'rm -rf "${logs}"' EXIT

declare -A pids=() # pid -> index of its command
failed=()
# finish_one waits for any running command, prints its log and notes a
# failure.
finish_one() {
  local done_pid i
  wait -n -p done_pid "${!pids[@]}"
  local rc=$?
  i="${pids[${done_pid}]}"
  unset "pids[${done_pid}]"
  cat "${logs}/${i}.log"
  (( rc == 0 )) || failed+=("${cmds[${i}]}")
}

cmds=("$@")
for i in "${!cmds[@]}"; do
  while (( ${#pids[@]} >= jobs )); do finish_one; done
  bash -c "${cmds[${i}]}" >"${logs}/${i}.log" 2>&1 &
  pids[$!]="${i}"
done
while (( ${#pids[@]} > 0 )); do finish_one; done

if (( ${#failed[@]} > 0 )); then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi
