#!/usr/bin/env bash
# The NRI plugin's Go module (nri/): gofmt, `go vet`, `go test`, and its generated client of
# topologyd's API matching proto/topologyd/v1/topologyd.proto. Exit 77 (a skip) without Go,
# unless TOPOLOGYD_REQUIRE_COMPONENTS=1 makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/../../nri"
. ../tools/go-cache.sh
go_or_skip nri
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
GOFLAGS=-mod=readonly ./gen_proto.sh "$generated"
if ! diff -r "$generated" internal/topologydv1 >/dev/null; then
  echo "nri: internal/topologydv1 is not what proto/topologyd/v1/topologyd.proto gives; run" \
    "nri/gen_proto.sh and commit the result" >&2
  diff -r "$generated" internal/topologydv1 | head -20 >&2
  exit 1
fi
go_module_checks nri
