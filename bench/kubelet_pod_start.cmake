# topologyd_kubelet_pod_start: a real kubelet's static pod start through topologyd-shim against
# the same kubelet straight on containerd, alternated in one run (docs/performance.md, "A real
# kubelet's pod start"). Built on the containerd and kubelet test harnesses, so only with the
# tests; not a CTest test (it takes minutes): run it by hand.
if(TARGET topologyd::test_kube AND TARGET topologyd::test_node)
  add_executable(topologyd_kubelet_pod_start ${CMAKE_CURRENT_LIST_DIR}/kubelet_pod_start.cc)
  target_include_directories(topologyd_kubelet_pod_start PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(
    topologyd_kubelet_pod_start PRIVATE topologyd::test_containerd topologyd::test_kube
                                        topologyd::test_node topologyd::cri_proto CLI11::CLI11
                                        fmt::fmt topologyd_warnings)
endif()
