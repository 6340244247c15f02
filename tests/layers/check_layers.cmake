# Script mode (cmake -P), run by ctest: builds the layering probes of
# tests/CMakeLists.txt in BUILD_DIR and checks that an upward include fails to
# compile for the missing header while an include of a lower layer compiles.
function(build_probe target out_result out_output)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${target}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${out_result} ${result} PARENT_SCOPE)
  set(${out_output} "${output}" PARENT_SCOPE)
endfunction()

build_probe(layer_probe_allowed result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "gpu including a common header failed to build:\n${output}")
endif()

foreach(probe_header IN ITEMS "layer_probe_upward_public|dvfslab/analysis.hpp"
                              "layer_probe_upward_private|report/escape.hpp")
  string(REPLACE "|" ";" probe_header "${probe_header}")
  list(GET probe_header 0 probe)
  list(GET probe_header 1 header)
  build_probe(${probe} result output)
  if(result EQUAL 0)
    message(FATAL_ERROR "${probe}: gpu including ${header} built, but ${header} belongs to a higher layer")
  endif()
  string(REPLACE "." "\\." header_pattern "${header}")
  if(NOT output MATCHES "${header_pattern}'? file not found|${header_pattern}: No such file")
    message(FATAL_ERROR "${probe} failed, but not because ${header} is out of reach:\n${output}")
  endif()
  message(STATUS "${probe}: ${header} is out of the gpu layer's reach, as it should be")
endforeach()
