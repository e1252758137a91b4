#!/usr/bin/env bash
# Installs the Debian 12 packages topologyd needs to build, if any are missing; with the
# argument `test`, also the real components the tests run against: containerd, runc and a
# static busybox for the test image (busybox-static replaces a dynamic busybox package), a
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
if [ "${1:-}" = test ]; then
  packages+=(containerd runc busybox-static prometheus python3-jsonschema python3-yaml
    python3-placement)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
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
