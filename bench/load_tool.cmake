# topologyd_load: N gRPC clients admitting and releasing pods against a daemon, with the no-op
# RPC and bare checkpoint floors measured in the same run (docs/performance.md, "Daemon load").
add_executable(topologyd_load ${CMAKE_CURRENT_LIST_DIR}/load_tool.cc
                              ${CMAKE_CURRENT_LIST_DIR}/load_phases.cc)
target_include_directories(topologyd_load PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(
  topologyd_load PRIVATE topologyd::proto topologyd::state topologyd::state_store topologyd::cpuset
                         topologyd::common CLI11::CLI11 fmt::fmt nlohmann_json::nlohmann_json Threads::Threads
                         CURL::libcurl
                         topologyd_warnings)

# A short run against a spawned daemon, so the tool keeps working: it exits non-zero when any
# admit or release fails.
set(LOAD_TOOL_SMOKE_TOPOLOGY ${TOPOLOGYD_SHARED_TOPOLOGIES}/amd-epyc7742-2s-nps4-4xa100-ib.xml)
if(TOPOLOGYD_BUILD_TESTS AND EXISTS ${LOAD_TOOL_SMOKE_TOPOLOGY})
  add_test(NAME load_tool_smoke
           COMMAND topologyd_load --spawn --daemon $<TARGET_FILE:topologyd> --topology
                   ${LOAD_TOOL_SMOKE_TOPOLOGY} --ops 200 --clients 2)
  set_tests_properties(load_tool_smoke PROPERTIES LABELS integration TIMEOUT 120)
  add_test(NAME load_tool_smoke_event_loop
           COMMAND topologyd_load --spawn --daemon $<TARGET_FILE:topologyd> --topology
                   ${LOAD_TOOL_SMOKE_TOPOLOGY} --ops 200 --clients 2 --driver event-loop)
  set_tests_properties(load_tool_smoke_event_loop PROPERTIES LABELS integration TIMEOUT 120)
  # Two daemons, exports off and on (scraped), one round: the comparison keeps working.
  add_test(NAME load_tool_smoke_compare_exports
           COMMAND topologyd_load --spawn --daemon $<TARGET_FILE:topologyd> --topology
                   ${LOAD_TOOL_SMOKE_TOPOLOGY} --ops 100 --clients 2 --phases status
                   --compare-exports 1)
  set_tests_properties(load_tool_smoke_compare_exports PROPERTIES LABELS integration TIMEOUT 120)
endif()
