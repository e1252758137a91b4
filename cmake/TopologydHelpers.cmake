# Helpers that keep every lib/ module a separate target named topologyd_<dir>
# with an alias topologyd::<dir>, and every test registered with CTest labels.

include_guard(GLOBAL)
include(TopologydLayering)

# topologyd_library(NAME <dir> KIND pure|adapter SRCS ... [HDRS ...] [DEPS ...])
# KIND pure: decision logic or data codecs, no I/O; adapter: reaches files, the kernel, the
# hardware or the network. topologyd_check_layering() holds pure modules to it.
function(topologyd_library)
  cmake_parse_arguments(ARG "" "NAME;KIND" "SRCS;HDRS;DEPS" ${ARGN})
  set(target topologyd_${ARG_NAME})
  if(NOT ARG_KIND)
    message(FATAL_ERROR "topologyd_library(${ARG_NAME}): KIND pure or KIND adapter is required")
  endif()
  if(ARG_SRCS)
    add_library(${target} STATIC ${ARG_SRCS} ${ARG_HDRS})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE topologyd_warnings)
  else()
    add_library(${target} INTERFACE ${ARG_HDRS})
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${ARG_DEPS})
  endif()
  add_library(topologyd::${ARG_NAME} ALIAS ${target})
  topologyd_set_kind(${target} ${ARG_KIND})
endfunction()

# topologyd_test(NAME <name> SRCS ... [DEPS ...] [LABELS unit|cli|integration|...] [ENV K=V ...])
# Builds one GoogleTest binary and lets CTest discover its cases, each labelled.
function(topologyd_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS;ENV" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main
                                            topologyd_warnings)
  # Test code gets line tables only, which failure backtraces need, instead of full debug
  # information: a third less compile time per test source. The code under test keeps -g.
  if(TOPOLOGYD_TEST_LINE_TABLES_ONLY)
    target_compile_options(${ARG_NAME} PRIVATE $<$<CONFIG:RelWithDebInfo,Debug>:-g1>)
  endif()
  target_compile_definitions(
    ${ARG_NAME} PRIVATE TOPOLOGYD_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                        TOPOLOGYD_BINARY_DIR="${PROJECT_BINARY_DIR}"
                        TOPOLOGYD_SHARED_TOPOLOGIES="${TOPOLOGYD_SHARED_TOPOLOGIES}")
  gtest_discover_tests(
    ${ARG_NAME}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT "${ARG_ENV}"
    DISCOVERY_TIMEOUT 60)
endfunction()

# topologyd_benchmark(NAME <name> SRCS ... [DEPS ...])
function(topologyd_benchmark)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} benchmark::benchmark topologyd_warnings)
  target_compile_definitions(
    ${ARG_NAME} PRIVATE TOPOLOGYD_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                        TOPOLOGYD_SHARED_TOPOLOGIES="${TOPOLOGYD_SHARED_TOPOLOGIES}")
endfunction()

# Adds every immediate subdirectory of the current source dir that has a CMakeLists.txt,
# so that modules can be added without editing a shared list.
function(topologyd_add_subdirectories)
  file(GLOB children LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT children)
  foreach(child ${children})
    if(IS_DIRECTORY ${child} AND EXISTS ${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()
