#!/usr/bin/env bash
# Makes the screenshots of docs/pictures.md from two recorded hwloc topologies:
#   docs/images/allocations-epyc7742-2s.png  `topoctl allocations -o svg` of a 2-socket AMD EPYC
#       7742 (NPS4: 8 NUMA nodes, 256 CPUs, 4 A100 GPUs) on which a topologyd started here has
#       admitted a few pods;
#   docs/images/topology-altix-64numa.png    `topoctl topology -o svg` of a 64-NUMA SGI Altix.
# Each SVG is rendered at its own size by headless Chromium (Debian's `chromium` package,
# needed only here, not by the build or the tests).
#   tools/render-pictures.sh TOPOLOGIES_DIR [BUILD_DIR] [OUT_DIR]
# TOPOLOGIES_DIR holds amd-epyc7742-2s-nps4-4xa100-ib.xml and ia64-altix-64numa.xml;
# BUILD_DIR (default build) has topologyd and topoctl built; OUT_DIR defaults to docs/images.
set -euo pipefail
topologies=$(realpath "${1:?usage: render-pictures.sh TOPOLOGIES_DIR [BUILD_DIR] [OUT_DIR]}")
build=$(realpath "${2:-build}")
out=$(realpath "${3:-docs/images}")
topoctl=$build/tools/topoctl/topoctl
topologyd=$build/daemon/topologyd
for tool in "$topoctl" "$topologyd"; do
  [ -x "$tool" ] || { echo "render-pictures: $tool is not built" >&2; exit 1; }
done
command -v chromium > /dev/null || {
  echo "render-pictures: needs chromium (apt-get install --no-install-recommends chromium)" >&2
  exit 1
}
mkdir -p "$out"
work=$(mktemp -d /tmp/render-pictures.XXXXXX)
daemon=
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2> /dev/null && wait "$daemon" 2> /dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# SVG -> PNG at the SVG's own width and height.
render() {
  local svg=$1 png=$2 size
  size=$(sed -n 's/^<svg [^>]*width="\([0-9]*\)" height="\([0-9]*\)".*/\1,\2/p' "$svg")
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/chromium" --hide-scrollbars --screenshot="$png" \
    --window-size="$size" "file://$svg" > /dev/null 2>&1
  echo "$png ($size)"
}

# A pod manifest: NAMESPACE NAME CONTAINER:CPUS:MEMORY[:GPUS] ...; CPUS "-": no resources
# (a BestEffort container, in the shared pool).
pod() {
  local ns=$1 name=$2
  shift 2
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, uid: %s-%s}\n' \
    "$name" "$ns" "$ns" "$name"
  printf 'spec:\n  containers:\n'
  local spec c cpus memory gpus
  for spec in "$@"; do
    IFS=: read -r c cpus memory gpus <<< "$spec"
    printf '  - name: %s\n    image: busybox\n' "$c"
    [ "$cpus" = - ] && continue
    printf '    resources:\n      limits: {cpu: "%s", memory: %s%s}\n' "$cpus" "$memory" \
      "${gpus:+, nvidia.com/gpu: \"$gpus\"}"
  done
}

# 1. Allocations on the 2-socket machine, from a topologyd with a fake cgroup tree.
"$(dirname "$0")/fake-cgroupfs.sh" "$work/cgroup" 0-255 0-7
cat > "$work/config.yaml" << YAML
listen: unix://$work/topologyd.sock
allowedPeers: {uids: [0], sameUser: true}
stateDir: $work/state
topology: {source: xml, path: $topologies/amd-epyc7742-2s-nps4-4xa100-ib.xml}
cpuManagerPolicy: static
reservedSystemCPUs: "0,128"
topologyManagerPolicy: single-numa-node
memoryManagerPolicy: Static
reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]
devices: [{resourceName: nvidia.com/gpu, pci: {vendor: "10de"}}]
cgroup: {root: $work/cgroup, driver: cgroupfs, version: v2, apply: false}
YAML
"$topologyd" --config "$work/config.yaml" > "$work/topologyd.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
  "$topoctl" --socket "$work/topologyd.sock" status > /dev/null 2>&1 && break
  sleep 0.1
done
admit() {
  pod "$@" > "$work/pod.yaml"
  "$topoctl" --socket "$work/topologyd.sock" admit -f "$work/pod.yaml" > /dev/null
}
admit shop web app:8:8Gi sidecar:2:1Gi
admit ml train trainer:16:32Gi:1
admit ml infer server:4:16Gi:1
admit db postgres db:24:48Gi
admit net dpdk fwd:6:4Gi
admit batch report job:12:32Gi
admit ml tune tuner:8:24Gi:1
admit web frontend nginx:-
"$topoctl" --socket "$work/topologyd.sock" allocations -o svg > "$work/allocations.svg"
render "$work/allocations.svg" "$out/allocations-epyc7742-2s.png"

# 2. The 64-NUMA machine alone.
"$topoctl" topology --input "$topologies/ia64-altix-64numa.xml" -o svg > "$work/topology.svg"
render "$work/topology.svg" "$out/topology-altix-64numa.png"
