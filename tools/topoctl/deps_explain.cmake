# topoctl explain: lib/admission's Explain on a pod manifest, offline (hwloc XML + config).
target_link_libraries(topoctl PRIVATE topologyd::admission topologyd::pod_manifest
                                      topologyd::topology_hwloc)
