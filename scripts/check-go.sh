#!/usr/bin/env bash
# check-go.sh fails with one clear line when the Go toolchain is missing or
# older than the one scripts/versions.env pins.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "${root}/scripts/versions.env"
if ! command -v go >/dev/null; then
  echo "minisched needs Go ${GO_VERSION} or newer: https://go.dev/doc/install" >&2
  exit 1
fi
have="$(go env GOVERSION)"; have="${have#go}"
if [[ "$(printf '%s\n%s\n' "${GO_VERSION}" "${have}" | sort -V | head -n1)" != "${GO_VERSION}" ]]; then
  echo "minisched needs Go ${GO_VERSION} or newer; this is Go ${have}" >&2
  exit 1
fi
# Every test runs with the race detector, which needs cgo (and so a C
# compiler, on Linux gcc).
if [[ "$(go env CGO_ENABLED)" != "1" ]]; then
  echo "minisched's tests use the race detector, which needs cgo: install a C compiler (gcc) and unset CGO_ENABLED=0" >&2
  exit 1
fi
