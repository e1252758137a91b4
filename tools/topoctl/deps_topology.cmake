# topoctl topology: hwloc for --live/--input/--synthetic, the proto conversion for the
# daemon's topology.
target_link_libraries(topoctl PRIVATE topologyd::topology_hwloc topologyd::rpc)
