# topologyd_nri_latency: the NRI plugin's cost in container creation, against two containerd 2.x
# of the same build with and without the plugin, alternated in one run (docs/performance.md,
# "NRI plugin"). Built on the containerd test harness, so only with the tests and the plugin.
if(TARGET topologyd::test_node AND TOPOLOGYD_BUILD_NRI)
  add_executable(topologyd_nri_latency ${CMAKE_CURRENT_LIST_DIR}/nri_latency.cc)
  target_include_directories(topologyd_nri_latency PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(
    topologyd_nri_latency PRIVATE topologyd::test_containerd topologyd::test_node topologyd::proto
                                  topologyd::pod CLI11::CLI11 fmt::fmt topologyd_warnings)
  add_dependencies(topologyd_nri_latency topologyd topologyd-nri nri-noop-plugin)
  # A short run, so the tool keeps working; it skips (exit 0, with the reason) where root or
  # containerd 2.x is missing, and fails when any call fails.
  if(TOPOLOGYD_CONTAINERD2_BIN_DIR)
    add_test(NAME nri_latency_smoke
             COMMAND topologyd_nri_latency --topologyd $<TARGET_FILE:topologyd>
                     --plugin ${TOPOLOGYD_NRI_BINARY} --noop-plugin ${TOPOLOGYD_NRI_NOOP_PLUGIN}
                     --containerd-dir ${TOPOLOGYD_CONTAINERD2_BIN_DIR} --creates 3)
    set_tests_properties(nri_latency_smoke PROPERTIES LABELS containerd TIMEOUT 300)
  endif()
endif()
