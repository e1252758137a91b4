#!/usr/bin/env bash
# Regenerates internal/topologydv1 from the daemon's API (proto/topologyd/v1/topologyd.proto)
# with the protoc plugins this module pins as tools. The generated files are committed, so
# that `go build` needs no protoc; `go generate ./...` runs this, and the module's test
# command fails when they differ from what the proto gives.
#   gen_proto.sh [OUT_DIR]   (default: internal/topologydv1 beside this script)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/internal/topologydv1}
package=topologyd.local/nri/internal/topologydv1
proto=topologyd/v1/topologyd.proto
command -v protoc > /dev/null || {
  echo "gen_proto.sh: protoc not found (Debian package protobuf-compiler)" >&2
  exit 1
}
cd "$here"
gen_go=$(go tool -n protoc-gen-go)
gen_grpc=$(go tool -n protoc-gen-go-grpc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
protoc -I "$here/../proto" \
  --plugin=protoc-gen-go="$gen_go" --plugin=protoc-gen-go-grpc="$gen_grpc" \
  --go_out="$work" --go_opt=paths=source_relative --go_opt=M$proto=$package \
  --go-grpc_out="$work" --go-grpc_opt=paths=source_relative --go-grpc_opt=M$proto=$package \
  "$proto"
mkdir -p "$out"
cp "$work"/topologyd/v1/*.go "$out"/
