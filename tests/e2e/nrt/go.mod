// The NodeResourceTopology API (topology.node.k8s.io) the topology-aware scheduler reads:
// pinned here so that the tests apply its own CustomResourceDefinition (manifests/crd.yaml of
// the module) to a real API server (tools/nrt-crd.sh). No Go code builds against it.
module topologyd.test/e2e/nrt

go 1.24.0

require github.com/k8stopologyawareschedwg/noderesourcetopology-api v0.1.2
