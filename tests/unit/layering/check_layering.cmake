# Configures tests/unit/layering/project once per case and checks that the layering check
# accepts the good graphs and refuses the bad ones, naming the chain.
# cmake -DPROJECT_DIR=... -DCMAKE_DIR=... -DWORK_DIR=... -P check_layering.cmake

function(expect case want_ok want_message)
  set(build ${WORK_DIR}/${case})
  file(REMOVE_RECURSE ${build})
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${build} -DLAYERING_CASE=${case}
            -DTOPOLOGYD_CMAKE_DIR=${CMAKE_DIR}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \n]+" " " text "${out}${err}")
  if(want_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "case ${case}: configuration failed but should pass:\n${out}${err}")
  endif()
  if(NOT want_ok AND rc EQUAL 0)
    message(FATAL_ERROR "case ${case}: configuration passed but should fail")
  endif()
  if(want_message AND NOT text MATCHES "${want_message}")
    message(FATAL_ERROR "case ${case}: no '${want_message}' in:\n${out}${err}")
  endif()
  message(STATUS "case ${case}: as expected")
endfunction()

expect(good TRUE "")
expect(allowed_edge TRUE "")
expect(pure_links_adapter FALSE
       "pure module topologyd_logic links I/O: topologyd_logic -> topologyd_middle -> topologyd_io")
expect(pure_links_io_library FALSE
       "pure module topologyd_logic links I/O: topologyd_logic -> yaml-cpp")
expect(forbidden_link FALSE "topologyd_tool must not link topologyd_io \\(only elsewhere\\)")
