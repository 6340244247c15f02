# Every target of the project compiles with these; third-party headers are
# included as SYSTEM so their warnings stay theirs.
add_library(dvfslab_warnings INTERFACE)
target_compile_options(dvfslab_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)

# CI builds with warnings as errors (scripts/test.sh); a local build only warns.
option(DVFSLAB_WERROR "Treat compiler warnings as errors" OFF)
if(DVFSLAB_WERROR)
  target_compile_options(dvfslab_warnings INTERFACE -Werror)
endif()
