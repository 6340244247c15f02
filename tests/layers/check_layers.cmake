# Script mode (cmake -P), run by ctest: builds the layering probes of
# tests/CMakeLists.txt in BUILD_DIR and checks that an upward include fails to
# compile for the missing header while an include of a lower layer compiles.
include(${CMAKE_CURRENT_LIST_DIR}/build_probe.cmake)

expect_probe_builds(layer_probe_allowed "gpu including a common header")
expect_header_out_of_reach(layer_probe_upward_public dvfslab/analysis.hpp gpu)
expect_header_out_of_reach(layer_probe_upward_private report/escape.hpp gpu)
