# Sourced by the scripts that build or test Go code (tools/build-kube.sh,
# tools/build-parity-oracle.sh, tests/parity/go_test.sh, tests/nri/go_test.sh): Go's caches and the cache of built
# Kubernetes programs live under the home directory, and a CI job may run without $HOME set.
if [ -z "${HOME:-}" ]; then
  HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
  export HOME
fi
# Where built Kubernetes programs are kept, by version (docs/testing.md).
kube_cache=${TOPOLOGYD_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topologyd/kube}

# module_version LABEL MODULE_DIR PATH: the version MODULE_DIR/go.mod requires of module PATH
# (on a `require PATH vX` line or inside a require block); says so and exits when it has none.
module_version() {
  local version
  version=$(awk -v m="$3" '$1 == "require" && $2 == m { print $3; exit }
    $1 == m { print $2; exit }' "$2/go.mod")
  if [ -z "$version" ]; then
    echo "$1: $2/go.mod requires no $3" >&2
    exit 1
  fi
  echo "$version"
}

# need_go LABEL WHAT: exits with a message when go is not on PATH.
need_go() {
  if ! command -v go >/dev/null 2>&1; then
    echo "$1: go is not on PATH; Go 1.25 or newer builds $2" >&2
    exit 1
  fi
}

# go_or_skip LABEL: for a test script, exits 77 (CTest's skip) when go is not on PATH, or 1
# when TOPOLOGYD_REQUIRE_COMPONENTS=1 makes that a failure.
go_or_skip() {
  command -v go >/dev/null 2>&1 && return 0
  if [ "${TOPOLOGYD_REQUIRE_COMPONENTS:-0}" = 1 ]; then
    echo "$1: go is not on PATH (TOPOLOGYD_REQUIRE_COMPONENTS=1 makes this a failure)" >&2
    exit 1
  fi
  echo "$1: skipped: go is not on PATH" >&2
  exit 77
}

# go_module_checks LABEL: gofmt, `go vet` and `go test` of the module in the current
# directory, with go.sum as committed.
go_module_checks() {
  local unformatted
  unformatted=$(gofmt -l .)
  if [ -n "$unformatted" ]; then
    echo "$1: not gofmt-formatted: $unformatted" >&2
    exit 1
  fi
  GOFLAGS=-mod=readonly go vet ./...
  GOFLAGS=-mod=readonly go test -count=1 ./...
}

# The name `go build` gives the program of package $1: its last path element, or the one before
# a major version suffix (go.etcd.io/etcd/server/v3 -> server).
go_program_name() {
  local last=${1##*/}
  if [[ $last =~ ^v[0-9]+$ ]]; then
    last=${1%/*}
    last=${last##*/}
  fi
  echo "$last"
}

# The file name of PACKAGE[=NAME] in the bin dir.
go_target_name() {
  if [[ $1 == *=* ]]; then
    echo "${1#*=}"
  else
    go_program_name "$1"
  fi
}

# go_build_cached LABEL MODULE_DIR BIN_DIR LDFLAGS PACKAGE[=NAME]...
# Builds the programs PACKAGE... (named as `go build` names them, or NAME) of the Go module in
# MODULE_DIR into BIN_DIR, those not there yet, with one `go build` (shared packages compile
# once; CGO off, -trimpath, go.sum as committed) under a lock on the cache, so that a second
# caller waits and then finds them. Says on stderr what it builds and how long it took.
go_build_cached() {
  local label=$1 module=$2 bin_dir=$3 ldflags=$4
  shift 4
  local entry missing=() still=()
  for entry in "$@"; do
    [ -x "$bin_dir/$(go_target_name "$entry")" ] || missing+=("$entry")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  mkdir -p "$kube_cache"
  exec 9>"$kube_cache/.lock"
  flock 9
  for entry in "${missing[@]}"; do
    [ -x "$bin_dir/$(go_target_name "$entry")" ] || still+=("$entry")
  done
  if [ ${#still[@]} -gt 0 ]; then
    local staging start status=0 names=() packages=()
    for entry in "${still[@]}"; do
      names+=("$(go_target_name "$entry")")
      packages+=("${entry%%=*}")
    done
    staging=$(mktemp -d "$kube_cache/.build.XXXXXX")
    echo "$label: building ${names[*]} (go $(go env GOVERSION)) into $bin_dir" >&2
    start=$(date +%s)
    (cd "$module" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath \
      -ldflags "$ldflags" -o "$staging/" "${packages[@]}") || status=$?
    if [ $status -eq 0 ]; then
      mkdir -p "$bin_dir"
      for entry in "${still[@]}"; do
        mv "$staging/$(go_program_name "${entry%%=*}")" "$bin_dir/$(go_target_name "$entry")"
      done
      echo "$label: built in $(($(date +%s) - start)) s" >&2
    fi
    rm -rf "$staging"
    exec 9>&-
    return $status
  fi
  exec 9>&-
}
