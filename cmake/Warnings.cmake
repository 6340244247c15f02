# Every target of the project compiles with these; third-party headers are
# included as SYSTEM so their warnings stay theirs.
add_library(dvfslab_warnings INTERFACE)
target_compile_options(dvfslab_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
