target_link_libraries(topoctl PRIVATE topologyd::topology_hwloc)
