#!/usr/bin/env bash
# The two quick-start commands of the README.
#
#   tools/quickstart.sh run    install dependencies, build, and run topologyd in the
#                              foreground on config/dev.yaml (simulated machine; socket,
#                              state and a fake cgroup tree under .run/; no root needed)
#   tools/quickstart.sh test   install dependencies (and containerd, runc, busybox-static
#                              for the tests against a real containerd), build kubelet from
#                              source (tools/build-kube.sh), containerd 2.x
#                              (tools/build-containerd.sh) and the parity oracle
#                              (tools/build-parity-oracle.sh), all cached, build and run every
#                              test, then the same under AddressSanitizer +
#                              UndefinedBehaviorSanitizer
#
# The test command requires every real component the tests use: a missing one fails its
# tests instead of skipping them (TOPOLOGYD_REQUIRE_COMPONENTS=1). To run without them on a
# machine that cannot have them, say so: TOPOLOGYD_REQUIRE_COMPONENTS=0 tools/quickstart.sh test
# Likewise the recorded-machine corpus (../shared/topologies beside the checkout): missing, the
# test command stops at once, unless run with TOPOLOGYD_REQUIRE_CORPUS=0 (its tests then skip).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
jobs=$(nproc 2>/dev/null || echo 2)

# Every option is passed on each call: `run` and `test` share build/, and CMake keeps the
# previous call's values for options not given (a `test` after `run` would otherwise build
# no tests). Line tables (-g1) instead of full debug information: a quarter to a third less
# compile time, backtraces keep file and line. A unity build compiles each target's sources
# as a few combined files, so the heavy headers (gRPC, protobuf, GoogleTest, JSON) are parsed
# once per batch instead of once per file (docs/testing.md, "Build time").
configure_and_build() {  # build_dir, extra cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" -DTOPOLOGYD_WERROR=ON -DTOPOLOGYD_LINE_TABLES_ONLY=ON \
    -DCMAKE_UNITY_BUILD=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

# CMake cannot change the compiler of a configured build directory: it drops the cache and
# with it the options of that call (a sanitizer build would quietly lose its sanitizers). A
# directory configured with another compiler is started afresh.
clear_if_other_compiler() {  # build_dir, compiler
  local cache=$1/CMakeCache.txt
  if [ -f "$cache" ] && ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=\(.*/\)\?$2\$" "$cache"; then
    echo "quickstart: $1 was configured with another compiler; starting it afresh"
    rm -rf "$1"
  fi
}

# Builds a Go component for the tests with its script (cached outside the checkout) and prints
# its directory. A failed build stops the test command, unless components are not required:
# then its tests skip.
go_component() {  # what, script, args...
  local what=$1
  shift
  echo "== $what ($1)" >&2
  local dir
  if ! dir=$("$@"); then
    if [ "$TOPOLOGYD_REQUIRE_COMPONENTS" = 1 ]; then
      echo "quickstart: $1 failed (above)" >&2
      exit 1
    fi
    echo "quickstart: $1 failed; its tests will skip (TOPOLOGYD_REQUIRE_COMPONENTS=0)" >&2
    dir=""
  fi
  echo "$dir"
}

case "${1:-}" in
  run)
    tools/install-deps.sh
    configure_and_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOPOLOGYD_BUILD_TESTS=OFF \
      -DTOPOLOGYD_BUILD_BENCHMARKS=OFF -DTOPOLOGYD_BUILD_NRI=OFF
    mkdir -p .run
    # The simulated machine of config/dev.yaml has 32 CPUs on 4 NUMA nodes.
    tools/fake-cgroupfs.sh .run/cgroup 0-31 0-3
    echo
    echo "topologyd is starting on config/dev.yaml. From another shell, try:"
    echo "  build/tools/topoctl/topoctl --socket .run/topologyd.sock status"
    echo "Stop it with Ctrl-C."
    echo
    exec build/daemon/topologyd --config config/dev.yaml
    ;;
  test)
    export TOPOLOGYD_REQUIRE_COMPONENTS=${TOPOLOGYD_REQUIRE_COMPONENTS:-1}
    # The recorded-machine corpus beside the checkout feeds the corpus, property and
    # differential tests; without it they would pass by running nothing.
    export TOPOLOGYD_REQUIRE_CORPUS=${TOPOLOGYD_REQUIRE_CORPUS:-1}
    if [ "$TOPOLOGYD_REQUIRE_CORPUS" = 1 ] && [ ! -d "$repo/../shared/topologies" ]; then
      echo "quickstart: the recorded-machine corpus is missing: $repo/../shared/topologies." >&2
      echo "  Put it beside the checkout, or run without its tests:" \
        "TOPOLOGYD_REQUIRE_CORPUS=0 tools/quickstart.sh test" >&2
      exit 1
    fi
    tools/install-deps.sh test
    kube_bin=$(go_component "Kubernetes binaries for the end-to-end tests" \
      tools/build-kube.sh kubelet etcd kube-apiserver kube-scheduler kube-controller-manager)
    containerd2_bin=$(go_component "containerd 2.x for the tests against containerd" tools/build-containerd.sh)
    oracle_bin=$(go_component "kubelet's managers as the parity oracle" tools/build-parity-oracle.sh)
    # The NRI plugin is Go too, built in the build tree (Go keeps its caches); without Go its
    # tests skip or, with TOPOLOGYD_REQUIRE_COMPONENTS=1, fail.
    build_nri=OFF
    if command -v go >/dev/null 2>&1; then build_nri=ON; fi
    go_dirs=(-DTOPOLOGYD_KUBE_BIN_DIR="$kube_bin" -DTOPOLOGYD_CONTAINERD2_BIN_DIR="$containerd2_bin"
      -DTOPOLOGYD_PARITY_ORACLE_DIR="$oracle_bin" -DTOPOLOGYD_BUILD_NRI=$build_nri)
    echo "== build and test (RelWithDebInfo)"
    configure_and_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOPOLOGYD_BUILD_TESTS=ON \
      -DTOPOLOGYD_BUILD_BENCHMARKS=ON "${go_dirs[@]}"
    (cd build && ctest --output-on-failure --no-tests=error -j "$jobs")
    # The sanitizer build uses clang: it compiles this tree in two thirds of GCC's time, and
    # CI then builds with both compilers (the libFuzzer build of tests/fuzz needs clang).
    # It also checks the locking annotations (-Wthread-safety, an error like every warning).
    echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer (clang)"
    clear_if_other_compiler build-asan clang++
    configure_and_build build-asan -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=Debug -DTOPOLOGYD_SANITIZE=address,undefined \
      -DTOPOLOGYD_THREAD_SAFETY=ON -DTOPOLOGYD_BUILD_TESTS=ON -DTOPOLOGYD_BUILD_BENCHMARKS=OFF \
      "${go_dirs[@]}"
    # hwloc's PCI plugin (libpciaccess) keeps about 1 KB per live-machine load and is
    # unloaded before LeakSanitizer reports, so the leak cannot be suppressed by name. The
    # sanitizer run discovers the live machine without PCI; PCI handling is tested on
    # recorded XML topologies, which never load that plugin.
    (cd build-asan && HWLOC_PLUGINS_BLACKLIST=hwloc_pci UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --output-on-failure --no-tests=error -j "$jobs")
    ;;
  *)
    echo "usage: tools/quickstart.sh run|test" >&2
    exit 2
    ;;
esac
