# Admission (lib/admission Admit) on machines with many NUMA nodes: 4 resources per pod.
topologyd_benchmark(NAME admission_bench SRCS ${CMAKE_CURRENT_LIST_DIR}/admission_bench.cc
                    DEPS topologyd::admission topologyd::config_node_policy topologyd::topology
                         topologyd::topology_hwloc)
