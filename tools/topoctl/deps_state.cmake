# topoctl state import-kubelet: kubelet checkpoints -> topologyd state file.
target_link_libraries(topoctl PRIVATE topologyd::state topologyd::state_store
                                      topologyd::kubelet_import)
