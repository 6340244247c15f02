# The layers of the library, a declared graph (docs/architecture.md#layers). Each
# module folder of src/ is one static library that names in DEPENDS the modules
# whose headers it includes, and links them PUBLIC. A module sees, through the
# include paths the compiler gets, nothing but
#   - the public and internal headers of include/dvfslab/ that it owns, and those of
#     the modules it depends on, directly or through them (a dependency's public
#     header may include its own dependencies' headers, so the view is the closure
#     of DEPENDS; a module not reachable through DEPENDS is out of sight), and
#   - the private headers of its own folder of src/.
# An include of an undeclared module's header (higher, or a sibling) therefore fails
# to compile with "No such file or directory". The views are folders of symbolic
# links under ${CMAKE_BINARY_DIR}/layers/<module>/, so editing a header needs no
# reconfigure; each header must be owned by exactly one module (checked at
# configure). Internal headers are plumbing shared inside the build: dependants see
# them, the install leaves them out.

set(DVFSLAB_LAYER_ROOT ${CMAKE_BINARY_DIR}/layers)
set_property(GLOBAL PROPERTY DVFSLAB_OWNED_HEADERS "")

# dvfslab_add_module(NAME FOLDER folder [SOURCES file...] [HEADERS name...]
#                    [INTERNAL_HEADERS name...] [DEPENDS module...])
#   NAME              module name; the target is dvfslab_NAME, exported as dvfslab::NAME
#   FOLDER            its folder of src/ (private headers are included as "FOLDER/x.hpp")
#   SOURCES           its .cpp files
#   HEADERS           the public headers it owns, without include/dvfslab/ and .hpp
#   INTERNAL_HEADERS  headers of include/dvfslab/ it owns that only the build sees
#   DEPENDS           the modules whose headers it includes (names, linked PUBLIC)
# Links the headers `names` of include/dvfslab/ into the view of module `name` and
# sets `out` to their paths; a header must exist and have no other owner.
function(dvfslab_link_owned_headers name view out)
  set(files)
  get_property(owned GLOBAL PROPERTY DVFSLAB_OWNED_HEADERS)
  foreach(header IN LISTS ARGN)
    set(file ${PROJECT_SOURCE_DIR}/include/dvfslab/${header}.hpp)
    if(NOT EXISTS ${file})
      message(FATAL_ERROR "dvfslab: module ${name} owns include/dvfslab/${header}.hpp, which does not exist")
    endif()
    if(header IN_LIST owned)
      message(FATAL_ERROR "dvfslab: include/dvfslab/${header}.hpp is owned by two modules")
    endif()
    list(APPEND owned ${header})
    list(APPEND files ${file})
    file(CREATE_LINK ${file} ${view}/include/dvfslab/${header}.hpp SYMBOLIC)
  endforeach()
  set_property(GLOBAL PROPERTY DVFSLAB_OWNED_HEADERS "${owned}")
  set(${out} ${files} PARENT_SCOPE)
endfunction()

function(dvfslab_add_module name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "FOLDER" "SOURCES;HEADERS;INTERNAL_HEADERS;DEPENDS")
  set(target dvfslab_${name})
  set(view ${DVFSLAB_LAYER_ROOT}/${name})
  file(REMOVE_RECURSE ${view})

  file(MAKE_DIRECTORY ${view}/include/dvfslab)
  dvfslab_link_owned_headers(${name} ${view} public_headers ${arg_HEADERS})
  dvfslab_link_owned_headers(${name} ${view} internal_headers ${arg_INTERNAL_HEADERS})

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
  foreach(dependency IN LISTS arg_DEPENDS)
    if(NOT TARGET dvfslab_${dependency})
      message(FATAL_ERROR "dvfslab: module ${name} depends on ${dependency}, which is not a module "
                          "declared before it")
    endif()
    target_link_libraries(${target} PUBLIC dvfslab_${dependency})
  endforeach()
  set_property(TARGET ${target} PROPERTY DVFSLAB_PUBLIC_HEADERS "${public_headers}")
  set_property(TARGET ${target} PROPERTY DVFSLAB_INTERNAL_HEADERS "${internal_headers}")
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
                          "HEADERS (or INTERNAL_HEADERS) of its module in src/CMakeLists.txt")
    endif()
  endforeach()
endfunction()

# Makes `target` compile `sources` with the include view of `module`, as if they
# were part of it (used by the layering tests to compile a forbidden include).
function(dvfslab_use_module_view target module)
  target_include_directories(${target} PRIVATE ${DVFSLAB_LAYER_ROOT}/${module}/src)
  target_link_libraries(${target} PRIVATE dvfslab_${module} dvfslab_warnings)
endfunction()

# dvfslab_add_umbrella(NAME HEADER name MODULES module...)
# The INTERFACE target dvfslab_NAME (dvfslab::NAME) links every module of MODULES and
# owns the umbrella header include/dvfslab/HEADER.hpp, which must include every
# public header of those modules and no internal one (checked here, at configure).
function(dvfslab_add_umbrella name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "HEADER" "MODULES")
  set(target dvfslab_${name})
  set(view ${DVFSLAB_LAYER_ROOT}/${name})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view}/include/dvfslab)
  dvfslab_link_owned_headers(${name} ${view} umbrella ${arg_HEADER})
  file(READ ${umbrella} umbrella_text)

  add_library(${target} INTERFACE)
  add_library(dvfslab::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${target}
    INTERFACE $<BUILD_INTERFACE:${view}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  foreach(module IN LISTS arg_MODULES)
    target_link_libraries(${target} INTERFACE dvfslab_${module})
    get_property(public_headers TARGET dvfslab_${module} PROPERTY DVFSLAB_PUBLIC_HEADERS)
    get_property(internal_headers TARGET dvfslab_${module} PROPERTY DVFSLAB_INTERNAL_HEADERS)
    foreach(header IN LISTS public_headers)
      get_filename_component(header ${header} NAME)
      string(FIND "${umbrella_text}" "#include \"dvfslab/${header}\"" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "dvfslab: ${arg_HEADER}.hpp misses the public header ${header} of ${module}")
      endif()
    endforeach()
    foreach(header IN LISTS internal_headers)
      get_filename_component(header ${header} NAME)
      string(FIND "${umbrella_text}" "#include \"dvfslab/${header}\"" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "dvfslab: ${arg_HEADER}.hpp includes ${header}, an internal header of ${module}")
      endif()
    endforeach()
  endforeach()
  set_property(TARGET ${target} PROPERTY DVFSLAB_PUBLIC_HEADERS "${umbrella}")
endfunction()
