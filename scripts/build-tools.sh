#!/usr/bin/env bash
# build-tools.sh builds the local control plane from Go modules alone:
# etcd, kube-apiserver, kube-scheduler and kubectl from the pinned tools
# module (scripts/tools), kwok and kwokctl from sigs.k8s.io/kwok, and copies
# kwok's stage definitions next to them. No Docker, no downloads of prebuilt
# binaries: everything comes through the Go module proxy.
#
# Usage: scripts/build-tools.sh [TOOLS_DIR]   (default: .cache/tools)
#
# Binaries already built for the pinned versions are reused. Where
# KUBEBUILDER_ASSETS points at a directory holding etcd and kube-apiserver of
# the pinned versions (as setup-envtest prepares), those two are linked
# instead of built.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=versions.env
source "${root}/scripts/versions.env"
tools_dir="${1:-${root}/.cache/tools}"
bin="${tools_dir}/bin"
mkdir -p "${bin}"

# The stamp records what the binaries were built from; a change of version
# or of this script means a rebuild.
stamp_want="$(cat "${root}/scripts/versions.env" "${root}/scripts/tools/go.mod" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"
stamp_file="${tools_dir}/stamp"
tools=(etcd kube-apiserver kube-scheduler kubectl kwok kwokctl)

have_all() {
  local t
  for t in "${tools[@]}"; do [[ -x "${bin}/${t}" ]] || return 1; done
  [[ -s "${tools_dir}/kwok-stages.yaml" ]]
}
if have_all && [[ "$(cat "${stamp_file}" 2>/dev/null)" == "${stamp_want}" ]]; then
  exit 0
fi
rm -f "${stamp_file}"

say() { printf '[tools] %s\n' "$*" >&2; }

# progress runs a build with -v into a log and prints, every 20 seconds, how
# many packages it has compiled so far, so a cold build never sits silent.
progress() {
  local label="$1"; shift
  local log="${tools_dir}/build-${label}.log" start=${SECONDS} next=$((SECONDS + 20)) pid
  "$@" >"${log}" 2>&1 &
  pid=$!
  while kill -0 "${pid}" 2>/dev/null; do
    sleep 1
    if (( SECONDS >= next )); then
      next=$((SECONDS + 20))
      say "  ${label}: $(grep -c . "${log}" || true) packages compiled, $((SECONDS - start))s elapsed"
    fi
  done
  if ! wait "${pid}"; then
    say "building ${label} failed; the last lines of ${log}:"
    tail -n 20 "${log}" >&2
    exit 1
  fi
  say "  ${label}: done in $((SECONDS - start))s"
}

# Upstream's version ldflags, on both version packages, so `kubectl version`
# and `kube-apiserver --version` print the pinned release.
build_date="$(cd "${root}/scripts/tools" && go mod download -json "k8s.io/kubernetes@${KUBERNETES_VERSION}" \
  | sed -n 's/.*"Info": "\(.*\)".*/\1/p' | xargs cat | sed -n 's/.*"Time":"\([^"]*\)".*/\1/p')"
minor="${KUBERNETES_VERSION#v*.}"; minor="${minor%%.*}"
major="${KUBERNETES_VERSION#v}"; major="${major%%.*}"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X ${pkg}.gitVersion=${KUBERNETES_VERSION}"
  ldflags+=" -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}"
  ldflags+=" -X ${pkg}.gitTreeState=archive -X ${pkg}.buildDate=${build_date:-1970-01-01T00:00:00Z}"
done

control_plane=(kube-apiserver kube-scheduler kubectl etcd)
assets="${KUBEBUILDER_ASSETS:-}"
# Our own bin directory is not a user's directory of binaries.
if [[ -n "${assets}" && "$(cd "${assets}" 2>/dev/null && pwd -P)" == "$(cd "${bin}" && pwd -P)" ]]; then
  assets=""
fi
if [[ -n "${assets}" && -x "${assets}/etcd" && -x "${assets}/kube-apiserver" ]] \
  && "${assets}/kube-apiserver" --version 2>/dev/null | grep -qx "Kubernetes ${KUBERNETES_VERSION}" \
  && "${assets}/etcd" --version 2>/dev/null | grep -q "etcd Version: ${ETCD_VERSION#v}$"; then
  say "using etcd and kube-apiserver from KUBEBUILDER_ASSETS=${assets}"
  ln -sf "${assets}/etcd" "${bin}/etcd"
  ln -sf "${assets}/kube-apiserver" "${bin}/kube-apiserver"
  control_plane=(kube-scheduler kubectl)
elif [[ -n "${assets}" ]]; then
  say "KUBEBUILDER_ASSETS=${assets} has no etcd ${ETCD_VERSION} and kube-apiserver ${KUBERNETES_VERSION}; building them"
fi

say "building ${control_plane[*]} (Kubernetes ${KUBERNETES_VERSION}, etcd ${ETCD_VERSION}) and kwok ${KWOK_VERSION} from Go modules."
say "A cold build takes about 11 minutes on 2 cores and about 3 GB of Go build cache; later runs reuse it."
pkgs=()
for t in "${control_plane[@]}"; do
  case "${t}" in
    etcd) pkgs+=(go.etcd.io/etcd/server/v3) ;;
    *) pkgs+=("k8s.io/kubernetes/cmd/${t}") ;;
  esac
done
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
(cd "${root}/scripts/tools" && progress control-plane env GOWORK=off go build -v -trimpath -ldflags "${ldflags}" -o "${tmp}/" "${pkgs[@]}")
# `go build -o dir/` names etcd after its package directory, "server".
[[ -e "${tmp}/server" ]] && mv "${tmp}/server" "${tmp}/etcd"
mv "${tmp}"/* "${bin}/"

(cd "${tmp}" && progress kwok env GOWORK=off GOBIN="${bin}" go install -v -trimpath \
  "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}" "sigs.k8s.io/kwok/cmd/kwokctl@${KWOK_VERSION}")

# kwok does not start without stages. Ship the module's own "fast" stages:
# nodes turn Ready, bound pods turn Running, deleted pods go away.
kwok_dir="$(cd "${root}/scripts/tools" && GOWORK=off go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
stages=(
  kustomize/stage/node/fast/node-initialize.yaml
  kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
  kustomize/stage/pod/fast/pod-ready.yaml
  kustomize/stage/pod/fast/pod-complete.yaml
  kustomize/stage/pod/fast/pod-delete.yaml
)
: >"${tmp}/stages.yaml"
for s in "${stages[@]}"; do
  { echo "---"; cat "${kwok_dir}/${s}"; } >>"${tmp}/stages.yaml"
done
mv "${tmp}/stages.yaml" "${tools_dir}/kwok-stages.yaml"

"${bin}/kubectl" version --client | sed 's/^/[tools] /' >&2
echo "${stamp_want}" >"${stamp_file}"
say "tools ready in ${bin}"
