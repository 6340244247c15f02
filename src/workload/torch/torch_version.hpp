#pragma once
// One test of the LibTorch version for every API that differs between the Debian
// package (1.13) and the PyTorch wheels dvfslab also builds against (2.x).
#include <torch/version.h>

#define DVFSLAB_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
