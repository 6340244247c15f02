#include "workload/torch/own_kernels.hpp"

#include <cstdint>
#include <string>

#include "dvfslab/error.hpp"

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

torch::Tensor dense_for_packs(const torch::Tensor& tensor) {
  auto dense = tensor.contiguous();
  // A fresh allocation starts on the allocator's boundary, which is wider than 16 bytes.
  return aligned_for_packs(dense) ? dense : dense.clone();
}

bool kernel_element_type_supported(torch::ScalarType type) {
  return type == torch::kFloat || type == torch::kHalf || type == torch::kBFloat16;
}

kernels::ElementType kernel_element_type(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat: return kernels::ElementType::float32;
    case torch::kHalf: return kernels::ElementType::float16;
    case torch::kBFloat16: return kernels::ElementType::bfloat16;
    default: throw Error(std::string("dvfslab's kernels take no ") + c10::toString(type) + " tensors");
  }
}

#if defined(DVFSLAB_OWN_KERNELS)
void check_kernel_launch(cudaError_t status, const char* kernel) {
  if (status != cudaSuccess) throw Error(std::string(kernel) + ": " + cudaGetErrorString(status));
}
#endif

}  // namespace dvfslab::torch_backend
