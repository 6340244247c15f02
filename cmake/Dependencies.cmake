find_package(Threads REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(SQLite3 REQUIRED)
# CMake 4 renamed FindSQLite3's target; 3.25 only has the old name.
if(TARGET SQLite3::SQLite3)
  set(DVFSLAB_SQLITE_TARGET SQLite3::SQLite3)
else()
  set(DVFSLAB_SQLITE_TARGET SQLite::SQLite3)
endif()
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
# `dvfslab exporter`: the Prometheus exposition format (prometheus-cpp's core).
# Debian ships its CMake package without a version file, so no version is asked.
find_package(prometheus-cpp CONFIG REQUIRED)
# The exporter's HTTP server, which its tests and benchmark also scrape it with.
# Not prometheus-cpp's own server (civetweb): its threads' fixed 100 KB stacks
# cannot start in a process that loads OpenBLAS with LibTorch (docs/fleet.md).
# Debian's cpp-httplib has only a pkg-config file.
find_package(PkgConfig REQUIRED)
pkg_check_modules(CPP_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

# Debian ships toml11 as headers only, without a CMake package.
find_path(TOML11_INCLUDE_DIR toml.hpp REQUIRED)
add_library(toml11_headers INTERFACE)
target_include_directories(toml11_headers SYSTEM INTERFACE ${TOML11_INCLUDE_DIR})

set(DVFSLAB_HAVE_TORCH OFF)
if(NOT DVFSLAB_WITH_TORCH STREQUAL "OFF")
  if(DVFSLAB_WITH_TORCH STREQUAL "ON")
    find_package(Torch REQUIRED)
  else()
    find_package(Torch QUIET)
  endif()
  if(Torch_FOUND)
    set(DVFSLAB_HAVE_TORCH ON)
  endif()
endif()
message(STATUS "dvfslab: LibTorch workloads ${DVFSLAB_HAVE_TORCH}")

# dvfslab's own CUDA kernels (src/workload/torch/kernels/) need a CUDA compiler and a
# LibTorch built with CUDA; without either, the workloads run ATen's kernels there.
# Enabled here, at the top level, because every target that links them needs the
# CUDA language's runtime.
set(DVFSLAB_OWN_KERNELS OFF)
if(DVFSLAB_HAVE_TORCH AND (TARGET torch_cuda OR TORCH_CUDA_LIBRARIES))
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(DVFSLAB_OWN_KERNELS ON)
  endif()
endif()
message(STATUS "dvfslab: own CUDA kernels ${DVFSLAB_OWN_KERNELS}")
