# Script mode (cmake -P), run by ctest: report declares DEPENDS analysis common, so
# including guard's header (a module neither declared nor below a declared one)
# fails to compile, while its declared dependencies' headers compile.
include(${CMAKE_CURRENT_LIST_DIR}/build_probe.cmake)

expect_probe_builds(layer_probe_sibling_allowed "report including analysis, common and its own private header")
expect_header_out_of_reach(layer_probe_sibling_public dvfslab/guard.hpp report)
