target_link_libraries(topoctl PRIVATE topologyd::hints)
