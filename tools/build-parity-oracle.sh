#!/usr/bin/env bash
# Builds the parity oracle (tests/parity/oracle: kubelet-oracle, which drives kubelet's own
# CPU, Memory, Device and Topology managers, and parity-compare) through the Go module proxy
# into a cache outside the checkout, and prints the directory that holds the two programs.
# Built programs are not built again.
#
#   tools/build-parity-oracle.sh               build what is missing, print the bin dir
#   tools/build-parity-oracle.sh --print-dir   print the bin dir, build nothing
#
# The Kubernetes version is that of tests/parity/oracle/go.mod (the same release as
# tests/e2e/kube, whose staging-module replace scheme it repeats). The cache key is a hash of
# the module's files, so any change builds anew; the cache is that of tools/build-kube.sh:
# ${TOPOLOGYD_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topologyd/kube}/parity-oracle.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
module=$repo/tests/parity/oracle
. "$repo/tools/go-cache.sh"

case "${1:-}" in
  "" | --print-dir) ;;
  *)
    echo "usage: tools/build-parity-oracle.sh [--print-dir]" >&2
    exit 2
    ;;
esac

version=$(module_version build-parity-oracle "$module" k8s.io/kubernetes)
key=$(cd "$module" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
bin_dir=$kube_cache/parity-oracle/$version-$key/bin

if [ "${1:-}" = --print-dir ]; then
  echo "$bin_dir"
  exit 0
fi

need_go build-parity-oracle "the parity oracle"
go_build_cached build-parity-oracle "$module" "$bin_dir" "-s -w" \
  topologyd.test/parity/oracle/cmd/kubelet-oracle topologyd.test/parity/oracle/cmd/parity-compare
echo "$bin_dir"
