#include "workload/torch/own_kernels.hpp"

#include <cstdint>

namespace dvfslab::torch_backend {

bool own_kernels_built() {
#if defined(DVFSLAB_OWN_KERNELS)
  return true;
#else
  return false;
#endif
}

bool aligned_for_packs(const torch::Tensor& tensor) {
  return reinterpret_cast<std::uintptr_t>(tensor.data_ptr()) % 16 == 0;
}

}  // namespace dvfslab::torch_backend
