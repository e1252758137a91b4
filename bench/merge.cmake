# Topology Manager merge: the fast merge against kubelet's brute force (tests/unit/hints).
if(TARGET topologyd_hints_reference)
  topologyd_benchmark(NAME merge_bench SRCS ${CMAKE_CURRENT_LIST_DIR}/merge_bench.cc
                      DEPS topologyd::hints topologyd_hints_reference)
else()
  topologyd_benchmark(
    NAME merge_bench SRCS ${CMAKE_CURRENT_LIST_DIR}/merge_bench.cc
    ${PROJECT_SOURCE_DIR}/tests/unit/hints/reference_merge.cc DEPS topologyd::hints)
  target_include_directories(merge_bench PRIVATE ${PROJECT_SOURCE_DIR})
endif()
