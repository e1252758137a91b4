#!/usr/bin/env bash
# Installs the Debian 12 packages topologyd needs to build, if any are missing; with the
# argument `test`, also the real components the tests run against: containerd and runc (unless
# Docker's containerd.io provides them) and a static busybox for the test image
# (busybox-static replaces a dynamic busybox package), a
# Prometheus server with promtool, and the Python JSON-schema checker that validates the
# NodeResourceTopology objects against their CRD, and OpenStack Placement (run from its
# Python modules with sqlite, no service started) for the Placement sync test.
# Idempotent: does nothing (and needs no privileges) when everything is installed.
#
#   tools/install-deps.sh          build dependencies
#   tools/install-deps.sh test     build dependencies and the tests' real components
set -euo pipefail

case "${1:-}" in
  "" | test) ;;
  *)
    echo "usage: tools/install-deps.sh [test]" >&2
    exit 2
    ;;
esac

packages=(
  build-essential cmake pkg-config git clang-format clang libclang-rt-14-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libhwloc-dev hwloc libspdlog-dev libfmt-dev libyaml-cpp-dev libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsystemd-dev
  libcli11-dev nlohmann-json3-dev libcurl4-openssl-dev util-linux
  prometheus-cpp-dev libcivetweb-dev uuid-dev libxxhash-dev
)
installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

if [ "${1:-}" = test ]; then
  packages+=(busybox-static prometheus python3-jsonschema python3-yaml python3-placement)
  # Docker's containerd.io package ships containerd and runc and conflicts with Debian's
  # containerd and runc: where it is installed, the tests use it (each test starts its own
  # private containerd from the binary; docs/testing.md) and nothing is replaced.
  if installed containerd.io; then
    echo "install-deps: using Docker's containerd.io package for containerd and runc"
  else
    packages+=(containerd runc)
  fi
fi

# Kubernetes is built from source for the end-to-end tests (tools/build-kube.sh). Debian 12's
# golang-go (1.19) is too old for it; Go 1.21 or newer fetches the toolchain tests/e2e/kube's
# go.mod asks for through the Go module proxy by itself.
if [ "${1:-}" = test ]; then
  go_version=$(go env GOVERSION 2>/dev/null || true)
  case "$go_version" in
    go1.2[1-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
    *)
      echo "install-deps: the tests build kubelet from source and need Go 1.21 or newer on" \
        "PATH (found: ${go_version:-none})" >&2
      # Told to run without the real components (tools/quickstart.sh), the kubelet tests skip.
      [ "${TOPOLOGYD_REQUIRE_COMPONENTS:-1}" = 0 ] || exit 1
      ;;
  esac
fi

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo_cmd=()
elif command -v sudo >/dev/null 2>&1; then
  sudo_cmd=(sudo)
else
  echo "install-deps: missing packages (${missing[*]}) and neither root nor sudo" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
