#!/usr/bin/env bash
# Lays out a minimal cgroup v2 root with the cpuset controller, as a stand-in for
# /sys/fs/cgroup when topologyd runs from a checkout (config/dev.yaml). Existing files are
# kept, so a tree the daemon already wrote to survives a restart.
#   tools/fake-cgroupfs.sh DIR CPUS MEMS     e.g. tools/fake-cgroupfs.sh .run/cgroup 0-31 0-3
set -euo pipefail
root=${1:?usage: fake-cgroupfs.sh DIR CPUS MEMS}
cpus=${2:?CPUS}
mems=${3:?MEMS}
mkdir -p "$root"
init() { [ -e "$1" ] || printf '%s\n' "$2" > "$1"; }
init "$root/cgroup.controllers" "cpuset cpu io memory pids"
init "$root/cgroup.subtree_control" "cpuset"
init "$root/cgroup.procs" ""
init "$root/cpuset.cpus" "$cpus"
init "$root/cpuset.mems" "$mems"
init "$root/cpuset.cpus.effective" "$cpus"
init "$root/cpuset.mems.effective" "$mems"
