#!/usr/bin/env bash
# `go vet` and `go test` of the parity oracle's module (tests/parity/oracle): the comparison's
# rules, each documented difference among them. Exit 77 (a skip) without Go, unless
# TOPOLOGYD_REQUIRE_COMPONENTS=1 makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/oracle"
. ../../../tools/go-cache.sh
go_or_skip parity
go_module_checks parity
