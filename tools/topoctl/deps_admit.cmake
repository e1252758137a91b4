# topoctl admit / explain / allocate / release / allocations: Pod manifests and their
# request form (topologyd::rpc also brings the topology proto conversion for `topology`).
target_link_libraries(topoctl PRIVATE topologyd::pod_manifest topologyd::rpc)
