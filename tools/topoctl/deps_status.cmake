target_link_libraries(topoctl PRIVATE topologyd::proto)
