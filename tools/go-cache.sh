# Sourced by the scripts that build or test Go code (tools/build-kube.sh,
# tools/build-parity-oracle.sh, tests/parity/go_test.sh): Go's caches and the cache of built
# Kubernetes programs live under the home directory, and a CI job may run without $HOME set.
if [ -z "${HOME:-}" ]; then
  HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
  export HOME
fi
# Where built Kubernetes programs are kept, by version (docs/testing.md).
kube_cache=${TOPOLOGYD_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topologyd/kube}

# go_build_cached LABEL MODULE_DIR BIN_DIR LDFLAGS PACKAGE...
# Builds the programs PACKAGE... (each named by the last element of its path) of the Go module
# in MODULE_DIR into BIN_DIR, those not there yet, with one `go build` (shared packages compile
# once; CGO off, -trimpath, go.sum as committed) under a lock on the cache, so that a second
# caller waits and then finds them. Says on stderr what it builds and how long it took.
go_build_cached() {
  local label=$1 module=$2 bin_dir=$3 ldflags=$4
  shift 4
  local pkg missing=() still=()
  for pkg in "$@"; do
    [ -x "$bin_dir/${pkg##*/}" ] || missing+=("$pkg")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  mkdir -p "$kube_cache"
  exec 9>"$kube_cache/.lock"
  flock 9
  for pkg in "${missing[@]}"; do
    [ -x "$bin_dir/${pkg##*/}" ] || still+=("$pkg")
  done
  if [ ${#still[@]} -gt 0 ]; then
    local staging start status=0
    staging=$(mktemp -d "$kube_cache/.build.XXXXXX")
    echo "$label: building ${still[*]##*/} (go $(go env GOVERSION)) into $bin_dir" >&2
    start=$(date +%s)
    (cd "$module" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath \
      -ldflags "$ldflags" -o "$staging/" "${still[@]}") || status=$?
    if [ $status -eq 0 ]; then
      mkdir -p "$bin_dir"
      for pkg in "${still[@]}"; do
        mv "$staging/${pkg##*/}" "$bin_dir/"
      done
      echo "$label: built in $(($(date +%s) - start)) s" >&2
    fi
    rm -rf "$staging"
    exec 9>&-
    return $status
  fi
  exec 9>&-
}
