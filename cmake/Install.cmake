# `cmake --install` puts the headers, the module libraries, the dvfslab binary and
# a CMake package in the prefix, so that another project writes
#   find_package(dvfslab REQUIRED)
#   target_link_libraries(app PRIVATE dvfslab::core)
# (examples/consumer/ does, built by a test against a build-local install).
include(CMakePackageConfigHelpers)

get_property(dvfslab_module_targets GLOBAL PROPERTY DVFSLAB_MODULE_TARGETS)
# The LibTorch workloads stay out of the package: a consumer of dvfslab::core
# should not need LibTorch. So does the front end of the command and the Python
# extension, which reads the environment (docs/architecture.md#layers), and the
# Prometheus exporter, which would make consumers need prometheus-cpp and cpp-httplib.
list(REMOVE_ITEM dvfslab_module_targets dvfslab_torch dvfslab_frontend dvfslab_exporter)
# Public headers only: a module's INTERNAL_HEADERS stay in the build (the test
# package_consumer_installs_no_internal_header checks the prefix).
foreach(target IN LISTS dvfslab_module_targets ITEMS dvfslab_core)
  get_property(headers TARGET ${target} PROPERTY DVFSLAB_PUBLIC_HEADERS)
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dvfslab)
endforeach()

install(TARGETS ${dvfslab_module_targets} dvfslab_core EXPORT dvfslabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS dvfslab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET dvfslab_run_workload)
  install(TARGETS dvfslab_run_workload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/dvfslab)
endif()

set(DVFSLAB_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dvfslab)
install(EXPORT dvfslabTargets NAMESPACE dvfslab:: DESTINATION ${DVFSLAB_PACKAGE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dvfslabConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/dvfslabConfig.cmake INSTALL_DESTINATION ${DVFSLAB_PACKAGE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/dvfslabConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dvfslabConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/dvfslabConfigVersion.cmake
        DESTINATION ${DVFSLAB_PACKAGE_DIR})
