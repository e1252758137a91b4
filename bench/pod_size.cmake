# Admission cost as a pod's container count grows (must stay linear per pod).
topologyd_benchmark(NAME pod_size_bench SRCS ${CMAKE_CURRENT_LIST_DIR}/pod_size_bench.cc
                    DEPS topologyd::admission topologyd::config_node_policy topologyd::topology_hwloc)
