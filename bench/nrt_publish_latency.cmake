# topologyd_nrt_publish_latency: answered admission -> NodeResourceTopology object updated in a
# private kube-apiserver, and Admit with publishing on vs off, in one run (docs/performance.md,
# "NodeResourceTopology publishing"). Built on the control-plane test harness, so only with the
# tests.
if(TARGET topologyd::test_kube)
  add_executable(topologyd_nrt_publish_latency ${CMAKE_CURRENT_LIST_DIR}/nrt_publish_latency.cc
                                               ${PROJECT_SOURCE_DIR}/tests/integration/process.cc)
  target_include_directories(topologyd_nrt_publish_latency PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(topologyd_nrt_publish_latency PRIVATE
                             TOPOLOGYD_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_link_libraries(
    topologyd_nrt_publish_latency PRIVATE topologyd::test_kube topologyd::kube_api
                                          topologyd::curl_easy topologyd::proto topologyd::pod
                                          CLI11::CLI11 fmt::fmt GTest::gtest topologyd_warnings)
  add_dependencies(topologyd_nrt_publish_latency topologyd topoctl)
  # A short run, so the tool keeps working; it skips (exit 0, with the reason) where the control
  # plane is not built, unless components are required, and fails when any call fails.
  add_test(NAME nrt_publish_latency_smoke COMMAND topologyd_nrt_publish_latency --admissions 5)
  set_tests_properties(nrt_publish_latency_smoke PROPERTIES LABELS integration TIMEOUT 300)
endif()
