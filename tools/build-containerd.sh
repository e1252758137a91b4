#!/usr/bin/env bash
# Builds containerd 2.x (containerd and containerd-shim-runc-v2, NRI built in) from source,
# through the Go module proxy, into a cache outside the checkout, and prints the directory that
# holds them. Built programs are not built again; no prebuilt binary is downloaded.
#
#   tools/build-containerd.sh               build what is missing, print the bin dir
#   tools/build-containerd.sh --print-dir   print the bin dir, build nothing
#
# The version is that of tests/e2e/containerd/go.mod; the cache key adds a hash of go.mod and
# go.sum; the cache is that of tools/build-kube.sh (tools/go-cache.sh).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
module=$repo/tests/e2e/containerd
. "$repo/tools/go-cache.sh"

case "${1:-}" in
  "" | --print-dir) ;;
  *)
    echo "usage: tools/build-containerd.sh [--print-dir]" >&2
    exit 2
    ;;
esac

version=$(module_version build-containerd "$module" github.com/containerd/containerd/v2)
key=$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-12)
bin_dir=$kube_cache/containerd/$version-$key/bin
if [ "${1:-}" = --print-dir ]; then
  echo "$bin_dir"
  exit 0
fi
need_go build-containerd containerd
# As containerd's own Makefile sets it, so that `containerd --version` names the release.
ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$version"
ldflags+=" -X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd/v2"
go_build_cached build-containerd "$module" "$bin_dir" "$ldflags" \
  github.com/containerd/containerd/v2/cmd/containerd \
  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
echo "$bin_dir"
