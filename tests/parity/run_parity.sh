#!/usr/bin/env bash
# The parity test: seeded random cases decided by kubelet's own managers (kubelet-oracle) and
# by topologyd (`topoctl replay`), which must agree (docs/testing.md, "Parity with kubelet's
# own code").
#
#   run_parity.sh ORACLE_BIN_DIR TOPOCTL CORPUS_DIR COUNT SEED...
#
# Exit 0 when every case agrees, 1 on a disagreement (the reduced case is printed), 77 (a
# skip) when the oracle or the corpus is missing, unless TOPOLOGYD_REQUIRE_COMPONENTS=1
# makes that a failure.
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: run_parity.sh ORACLE_BIN_DIR TOPOCTL CORPUS_DIR COUNT SEED..." >&2; exit 2; }
oracle_dir=$1 topoctl=$2 corpus=$3 count=$4
shift 4

missing() {
  if [ "${TOPOLOGYD_REQUIRE_COMPONENTS:-0}" = 1 ]; then
    echo "parity: $1 (TOPOLOGYD_REQUIRE_COMPONENTS=1 makes this a failure)" >&2
    exit 1
  fi
  echo "parity: skipped: $1" >&2
  exit 77
}
[ -n "$oracle_dir" ] && [ -x "$oracle_dir/kubelet-oracle" ] && [ -x "$oracle_dir/parity-compare" ] ||
  missing "no parity oracle; build it with tools/build-parity-oracle.sh and configure with -DTOPOLOGYD_PARITY_ORACLE_DIR=DIR"
[ -d "$corpus" ] || missing "no recorded machines at $corpus"

for seed in "$@"; do
  "$oracle_dir/parity-compare" --oracle "$oracle_dir/kubelet-oracle" --topoctl "$topoctl" \
    --corpus "$corpus" --seed "$seed" --count "$count"
done
