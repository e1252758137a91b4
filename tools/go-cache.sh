# Sourced by the scripts that build or test Go code (tools/build-kube.sh,
# tools/build-parity-oracle.sh, tests/parity/go_test.sh): Go's caches and the cache of built
# Kubernetes programs live under the home directory, and a CI job may run without $HOME set.
if [ -z "${HOME:-}" ]; then
  HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
  export HOME
fi
# Where built Kubernetes programs are kept, by version (docs/testing.md).
kube_cache=${TOPOLOGYD_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/topologyd/kube}
