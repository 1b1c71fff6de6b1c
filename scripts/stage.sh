#!/usr/bin/env bash
# stage.sh NAME COMMAND...: runs COMMAND, framed by its name and how long it
# took, so that `make test` and `make verify` show where the time goes.
set -uo pipefail
name="$1"; shift
start=$(date +%s.%N)
echo "==> ${name}"
"$@"
rc=$?
secs=$(awk -v s="${start}" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
if (( rc == 0 )); then
  echo "<== ${name}: ok in ${secs}s"
else
  echo "<== ${name}: FAILED (exit ${rc}) after ${secs}s"
fi
exit "${rc}"
