# Helpers of the layering checks (script mode): each builds one probe target of
# tests/CMakeLists.txt in BUILD_DIR.

# Stops the test unless `probe` builds.
function(expect_probe_builds probe what)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${probe}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed to build:\n${output}")
  endif()
endfunction()

# Stops the test unless `probe`, compiled as part of `module`, fails to build
# because `header` is not found, and for no other reason.
function(expect_header_out_of_reach probe header module)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${probe}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(result EQUAL 0)
    message(FATAL_ERROR "${probe}: ${module} including ${header} built, but ${header} is outside its layer")
  endif()
  string(REPLACE "." "\\." header_pattern "${header}")
  if(NOT output MATCHES "${header_pattern}'? file not found|${header_pattern}: No such file")
    message(FATAL_ERROR "${probe} failed, but not because ${header} is out of reach:\n${output}")
  endif()
  message(STATUS "${probe}: ${header} is out of the ${module} layer's reach, as it should be")
endfunction()
