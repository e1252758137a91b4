# Loading an 8-NUMA hwloc XML with PCI devices, and building the model from it.
topologyd_benchmark(NAME topology_bench SRCS ${CMAKE_CURRENT_LIST_DIR}/topology_bench.cc
                    DEPS topologyd::topology_hwloc)
