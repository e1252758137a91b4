# topoctl simulate's engine (lib/simulate) on 10,000 pods, beside the bare ledger it drives,
# and the per-combination cost of kubelet's merge (the brute-force reference of tests/unit/hints).
if(TARGET topologyd_hints_reference)
  topologyd_benchmark(NAME simulate_bench SRCS ${CMAKE_CURRENT_LIST_DIR}/simulate_bench.cc
                      DEPS topologyd::simulate topologyd::config topologyd::config_node_policy
                           topologyd::topology_hwloc topologyd_hints_reference)
else()
  topologyd_benchmark(
    NAME simulate_bench SRCS ${CMAKE_CURRENT_LIST_DIR}/simulate_bench.cc
    ${PROJECT_SOURCE_DIR}/tests/unit/hints/reference_merge.cc
    DEPS topologyd::simulate topologyd::config topologyd::config_node_policy
         topologyd::topology_hwloc)
  target_include_directories(simulate_bench PRIVATE ${PROJECT_SOURCE_DIR})
endif()
