#!/usr/bin/env bash
# Prints the path of the NodeResourceTopology CustomResourceDefinition (manifests/crd.yaml) of
# the noderesourcetopology-api release tests/e2e/nrt/go.mod pins, fetched through the Go module
# proxy into Go's module cache (checked against the committed go.sum).
#   tools/nrt-crd.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tools/go-cache.sh"
need_go nrt-crd "the NodeResourceTopology CRD's download"
module=github.com/k8stopologyawareschedwg/noderesourcetopology-api
version=$(module_version nrt-crd "$here/tests/e2e/nrt" "$module")
dir=$(cd "$here/tests/e2e/nrt" &&
  GOFLAGS=-mod=readonly go mod download -json "$module@$version" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
crd="$dir/manifests/crd.yaml"
if [ ! -f "$crd" ]; then
  echo "nrt-crd: $module@$version has no manifests/crd.yaml" >&2
  exit 1
fi
echo "$crd"
