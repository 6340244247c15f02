#!/usr/bin/env bash
# Prepares the GPU machine for building dvfslab: that machine has no package
# registry, so the Debian -dev packages dvfslab needs travel with the tree in
# .devdeps/ (fill it here with: cd .devdeps && apt-get download <packages>) and are
# unpacked into a private prefix, never into /. Then configures and builds
# build/device against the LibTorch inside the machine's PyTorch.
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
if [[ ! -x "$repo_root/build/device/src/dvfslab" ]]; then
  cmake -S "$repo_root" -B "$repo_root/build/device" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix/usr;$libdir/cmake;$torch_prefix" \
    -DSQLite3_INCLUDE_DIR="$prefix/usr/include" -DSQLite3_LIBRARY="$libdir/libsqlite3.so" \
    -DDVFSLAB_WITH_TORCH=ON -DDVFSLAB_BUILD_TESTS=OFF -DDVFSLAB_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 ${DVFSLAB_CMAKE_ARGS:-}
  cmake --build "$repo_root/build/device" -j "$(nproc)"
fi
export DVFSLAB="$repo_root/build/device/src/dvfslab"
set +e
