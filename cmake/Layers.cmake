# The layers of the library (docs/architecture.md#layers: common → model → gpu →
# meter → guard → workload → store → analysis → sweep → report → study → slurm). Each module folder of
# src/ is one static library that links only the module below it, and each module
# sees, through the include paths the compiler gets, nothing but
#   - the public headers of include/dvfslab/ that it or a lower module owns, and
#   - the private headers of its own folder of src/.
# An include of a higher module's header therefore fails to compile with "No such
# file or directory". The views are folders of symbolic links under
# ${CMAKE_BINARY_DIR}/layers/<module>/, so editing a header needs no reconfigure;
# each public header must be owned by exactly one module (checked at configure).

set(DVFSLAB_LAYER_ROOT ${CMAKE_BINARY_DIR}/layers)
set_property(GLOBAL PROPERTY DVFSLAB_OWNED_HEADERS "")

# dvfslab_add_module(NAME FOLDER folder [SOURCES file...] [HEADERS name...] [BELOW target])
#   NAME     module name; the target is dvfslab_NAME, exported as dvfslab::NAME
#   FOLDER   its folder of src/ (private headers are included as "FOLDER/x.hpp")
#   SOURCES  its .cpp files
#   HEADERS  the public headers it owns, without include/dvfslab/ and .hpp
#   BELOW    the module target it builds on (linked PUBLIC)
function(dvfslab_add_module name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "FOLDER;BELOW" "SOURCES;HEADERS")
  set(target dvfslab_${name})
  set(view ${DVFSLAB_LAYER_ROOT}/${name})
  file(REMOVE_RECURSE ${view})

  set(public_headers)
  get_property(owned GLOBAL PROPERTY DVFSLAB_OWNED_HEADERS)
  file(MAKE_DIRECTORY ${view}/include/dvfslab)
  foreach(header IN LISTS arg_HEADERS)
    set(file ${PROJECT_SOURCE_DIR}/include/dvfslab/${header}.hpp)
    if(NOT EXISTS ${file})
      message(FATAL_ERROR "dvfslab: module ${name} owns include/dvfslab/${header}.hpp, which does not exist")
    endif()
    if(header IN_LIST owned)
      message(FATAL_ERROR "dvfslab: include/dvfslab/${header}.hpp is owned by two modules")
    endif()
    list(APPEND owned ${header})
    list(APPEND public_headers ${file})
    file(CREATE_LINK ${file} ${view}/include/dvfslab/${header}.hpp SYMBOLIC)
  endforeach()
  set_property(GLOBAL PROPERTY DVFSLAB_OWNED_HEADERS "${owned}")

  get_filename_component(folder_parent ${view}/src/${arg_FOLDER} DIRECTORY)
  file(MAKE_DIRECTORY ${folder_parent})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/${arg_FOLDER} ${view}/src/${arg_FOLDER} SYMBOLIC)

  add_library(${target} STATIC ${arg_SOURCES})
  add_library(dvfslab::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME dvfslab_${name})
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${view}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE $<BUILD_INTERFACE:${view}/src>)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:dvfslab_warnings>)
  if(arg_BELOW)
    target_link_libraries(${target} PUBLIC ${arg_BELOW})
  endif()
  set_property(TARGET ${target} PROPERTY DVFSLAB_PUBLIC_HEADERS "${public_headers}")
  set_property(GLOBAL APPEND PROPERTY DVFSLAB_MODULE_TARGETS ${target})
endfunction()

# Every header of include/dvfslab/ belongs to a module: a new header must be given
# one, or no layer could include it.
# UNBUILT names headers whose module is not part of this build (LibTorch's).
function(dvfslab_check_header_owners)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "UNBUILT")
  get_property(owned GLOBAL PROPERTY DVFSLAB_OWNED_HEADERS)
  list(APPEND owned ${arg_UNBUILT})
  file(GLOB headers RELATIVE ${PROJECT_SOURCE_DIR}/include/dvfslab CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/include/dvfslab/*.hpp)
  foreach(header IN LISTS headers)
    string(REGEX REPLACE "\\.hpp$" "" header ${header})
    if(NOT header IN_LIST owned)
      message(FATAL_ERROR "dvfslab: include/dvfslab/${header}.hpp belongs to no module: add it to the "
                          "HEADERS of its module in src/CMakeLists.txt")
    endif()
  endforeach()
endfunction()

# Makes `target` compile `sources` with the include view of `module`, as if they
# were part of it (used by the layering test to compile a forbidden include).
function(dvfslab_use_module_view target module)
  target_include_directories(${target} PRIVATE ${DVFSLAB_LAYER_ROOT}/${module}/src)
  target_link_libraries(${target} PRIVATE dvfslab_${module} dvfslab_warnings)
endfunction()
