#!/usr/bin/env bash
# Prepares the GPU machine for building dvfslab: that machine has no package
# registry, so the Debian -dev packages dvfslab needs travel with the tree in
# .devdeps/ and are unpacked into a private prefix, never into /. Fill it on a
# Debian 12 machine with:
#   mkdir -p .devdeps && cd .devdeps && apt-get download libcli11-dev nlohmann-json3-dev \
#     libtoml11-dev libsqlite3-dev libsqlite3-0 libeigen3-dev libfmt-dev libfmt9 \
#     libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian prometheus-cpp-dev \
#     libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libprometheus-cpp-push1.0 libcivetweb-dev \
#     libcivetweb1 civetweb libcurl4-openssl-dev libcurl4 zlib1g-dev libcpp-httplib-dev \
#     libcpp-httplib0.11 libssl-dev libssl3 libbrotli-dev libbrotli1
# (prometheus-cpp for `dvfslab exporter`'s exposition format; its CMake package asks
# for civetweb, zlib and curl, though dvfslab links none of them; cpp-httplib for the
# exporter's HTTP server, with the OpenSSL and Brotli headers its header includes and
# the libraries its library needs). Then configures and builds
# build/device against the LibTorch inside the machine's PyTorch (incrementally).
# Usage: source bench/device/prepare.sh   (exports DVFSLAB and DVFSLAB_DEVICE_PREFIX)
export DVFSLAB_READ_ONLY=1
set -e
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prefix=/opt/dvfslab-deps
if [[ -d "$repo_root/.devdeps" ]]; then
  mkdir -p "$prefix"
  for deb in "$repo_root"/.devdeps/*.deb; do dpkg -x "$deb" "$prefix"; done
fi
libdir="$prefix/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
# DVFSLAB_TORCH_TESTS=1 also builds the LibTorch tests (build/device/tests/dvfslab_torch_tests).
with_tests=OFF
targets=(--target dvfslab)
if [[ -n "${DVFSLAB_TORCH_TESTS:-}" ]]; then
  with_tests=ON
  targets+=(dvfslab_torch_tests)
fi
# The exporter asks pkg-config for cpp-httplib, whose Debian .pc file names /usr and
# the OpenSSL/Brotli .pc files of packages this machine lacks. This .pc names the
# prefix's header and library instead, with the features Debian's library was built
# with: they change the layout of its types.
mkdir -p "$prefix/pkgconfig"
printf '%s\n' 'Name: cpp-httplib' 'Description: Debian'"'"'s, unpacked into the prefix' 'Version: 0.11.4' \
  "Cflags: -I$prefix/usr/include -I$prefix/usr/include/x86_64-linux-gnu -DCPPHTTPLIB_OPENSSL_SUPPORT -DCPPHTTPLIB_ZLIB_SUPPORT -DCPPHTTPLIB_BROTLI_SUPPORT" \
  "Libs: -L$libdir -lcpp-httplib" > "$prefix/pkgconfig/cpp-httplib.pc"
export PKG_CONFIG_PATH="$prefix/pkgconfig"
# The run paths of the binary and of its LibTorch module (dvfslab-run-workload.so)
# are written as DT_RPATH (--disable-new-dtags), which the loader also searches for
# the prefix libraries' own dependencies (cpp-httplib's library needs Brotli's), so
# build/device/src/dvfslab runs without LD_LIBRARY_PATH, from scripts that did not
# source this one.
# dvfslab's own CUDA kernels need nvcc: CMake looks on PATH and in CUDACXX.
if ! command -v nvcc >/dev/null && [[ -z "${CUDACXX:-}" && -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
if [[ ! -f "$repo_root/build/device/build.ninja" ]]; then
  # A configure that failed (say, run without .devdeps) leaves a cache naming the
  # system's packages; configuring over it would mix those with the prefix's.
  rm -f "$repo_root/build/device/CMakeCache.txt"
  cmake -S "$repo_root" -B "$repo_root/build/device" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix/usr;$libdir/cmake;$torch_prefix" \
    -DSQLite3_INCLUDE_DIR="$prefix/usr/include" -DSQLite3_LIBRARY="$libdir/libsqlite3.so" \
    -DDVFSLAB_WITH_TORCH=ON -DDVFSLAB_BUILD_TESTS=$with_tests -DDVFSLAB_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags \
    -DCMAKE_MODULE_LINKER_FLAGS=-Wl,--disable-new-dtags ${DVFSLAB_CMAKE_ARGS:-}
fi
# Incremental: a warm machine rebuilds only what changed in the copied tree.
cmake --build "$repo_root/build/device" -j "$(nproc)" "${targets[@]}"
export DVFSLAB="$repo_root/build/device/src/dvfslab"
set +e
