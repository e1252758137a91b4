#!/usr/bin/env bash
# Builds Kubernetes binaries from source, through the Go module proxy, into a cache outside the
# checkout, and prints the directory that holds them. A binary already in the cache is not
# built again. No prebuilt binary is downloaded.
#
#   tools/build-kube.sh kubelet [etcd kube-apiserver ...]  build what is missing, print the bin dir
#   tools/build-kube.sh --print-dir                        print the bin dir, build nothing
#
# The versions are those of tests/e2e/kube/go.mod: etcd's, scheduler-plugins', k8s.io/kubernetes and, replacing
# its staging modules, the k8s.io/<staging> v0.x releases of the same minor (k8s.io/kubernetes
# cannot be `go install`ed: its own go.mod replaces them by directories). All binaries asked
# for are built by one `go build`, which compiles the code they share once. The cache key is
# the Kubernetes version and a hash of go.mod and go.sum, so a change of either builds anew;
# the cache is ${TOPOLOGYD_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topologyd/kube}.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
module=$repo/tests/e2e/kube
. "$repo/tools/go-cache.sh"

usage() {
  echo "usage: tools/build-kube.sh BINARY... | --print-dir" >&2
  echo "  BINARY: kubelet, kube-apiserver, kube-controller-manager, kube-scheduler or etcd" \
    "(tools in $module/go.mod)" >&2
  exit 2
}
[ $# -ge 1 ] || usage

need_go build-kube "the Kubernetes binaries"
version=$(module_version build-kube "$module" k8s.io/kubernetes)
key=$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-12)
bin_dir=$kube_cache/$version-$key/bin

if [ "$1" = --print-dir ]; then
  [ $# -eq 1 ] || usage
  echo "$bin_dir"
  exit 0
fi

# The programs by the name tests use, and the tool of go.mod that builds each.
package_of() {
  case "$1" in
    kubelet | kube-apiserver | kube-controller-manager) echo "k8s.io/kubernetes/cmd/$1" ;;
    # scheduler-plugins' build of kube-scheduler: every in-tree plugin and, among its own,
    # NodeResourceTopologyMatch; a profile chooses which run.
    kube-scheduler) echo "sigs.k8s.io/scheduler-plugins/cmd/scheduler" ;;
    etcd) echo "go.etcd.io/etcd/server/v3" ;;
    *) return 1 ;;
  esac
}
packages=()
for name in "$@"; do
  if ! package=$(package_of "$name"); then
    echo "build-kube: unknown program '$name' (kubelet, kube-apiserver," \
      "kube-controller-manager, kube-scheduler, etcd)" >&2
    exit 2
  fi
  if ! grep -q "^[[:space:]]*$package\$" "$module/go.mod"; then
    echo "build-kube: $package is not a tool of $module/go.mod (add it with" \
      "'go get -tool $package' there)" >&2
    exit 1
  fi
  packages+=("$package=$name")
done

# The version strings kubelet --version and the API server report, as Kubernetes' own
# release build sets them (hack/lib/version.sh).
minor=${version#v1.}
minor=${minor%%.*}
build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done
go_build_cached build-kube "$module" "$bin_dir" "$ldflags" "${packages[@]}"
echo "$bin_dir"
