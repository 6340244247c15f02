# Every target of the project compiles with these; third-party headers are
# included as SYSTEM so their warnings stay theirs.
add_library(dvfslab_warnings INTERFACE)
target_compile_options(dvfslab_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
# A Setting is an aggregate of optional knobs: code names the knobs it sets
# (Setting{sm, mem, pl}) and every knob left out is absent by design, which
# -Wextra's missing-field-initializers would flag each time a knob is added.
target_compile_options(dvfslab_warnings INTERFACE -Wno-missing-field-initializers)

# CI builds with warnings as errors (scripts/test.sh); a local build only warns.
option(DVFSLAB_WERROR "Treat compiler warnings as errors" OFF)
if(DVFSLAB_WERROR)
  target_compile_options(dvfslab_warnings INTERFACE -Werror)
endif()

# GCC 12 reports -Wrestrict inside std::string's own code at -O2 and above for plain
# assignments and concatenations (GCC bug 105329, fixed in GCC 13): with -Werror it
# would fail correct code, so there it stays a warning.
if(DVFSLAB_WERROR AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(dvfslab_warnings INTERFACE -Wno-error=restrict)
endif()
