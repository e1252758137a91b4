# topoctl take: kubelet's static-policy CPU choice, offline.
target_link_libraries(topoctl PRIVATE topologyd::cpu topologyd::topology_hwloc)
