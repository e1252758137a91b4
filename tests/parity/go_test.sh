#!/usr/bin/env bash
# `go vet` and `go test` of the parity oracle's module (tests/parity/oracle): the comparison's
# rules, each documented difference among them. Exit 77 (a skip) without Go, unless
# TOPOLOGYD_REQUIRE_COMPONENTS=1 makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/oracle"
if ! command -v go >/dev/null 2>&1; then
  if [ "${TOPOLOGYD_REQUIRE_COMPONENTS:-0}" = 1 ]; then
    echo "parity: go is not on PATH (TOPOLOGYD_REQUIRE_COMPONENTS=1 makes this a failure)" >&2
    exit 1
  fi
  echo "parity: skipped: go is not on PATH" >&2
  exit 77
fi
. ../../../tools/go-cache.sh
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "parity: not gofmt-formatted: $unformatted" >&2
  exit 1
fi
export GOFLAGS=-mod=readonly
go vet ./...
go test -count=1 ./...
