# topologyd_shim_latency: the shim's cost against the same private containerd, measured in one
# run: pass-through calls through the shim vs directly, and an exclusive container's creation
# through the shim vs direct creation plus topologyd's admission (docs/performance.md, "Kubelet
# shim"). Built on the containerd test harness, so only with the tests.
if(TARGET topologyd::test_containerd)
  add_executable(topologyd_shim_latency ${CMAKE_CURRENT_LIST_DIR}/shim_latency.cc)
  target_include_directories(topologyd_shim_latency PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(
    topologyd_shim_latency PRIVATE topologyd::test_containerd topologyd::proto topologyd::cri_proto
                                   topologyd::pod CLI11::CLI11 fmt::fmt topologyd_warnings)
  # A short run, so the tool keeps working; it skips (exit 0, with the reason) where containerd
  # or root is missing, and fails when any call fails.
  add_test(NAME shim_latency_smoke
           COMMAND topologyd_shim_latency --topologyd $<TARGET_FILE:topologyd>
                   --shim $<TARGET_FILE:topologyd-shim> --calls 50 --creates 3)
  set_tests_properties(shim_latency_smoke PROPERTIES LABELS containerd TIMEOUT 300)
endif()
