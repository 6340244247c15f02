#pragma once
// The CUDA element type an ElementType names, handed to a launcher as a value of
// that type, so one generic host lambda launches the kernel for every type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "element_type.hpp"

namespace dvfslab::torch_backend::kernels {

// launch(float{}), launch(__half{}) or launch(__nv_bfloat16{}).
template <typename Launch>
cudaError_t with_element_type(ElementType type, Launch&& launch) {
  switch (type) {
    case ElementType::float32: return launch(float{});
    case ElementType::float16: return launch(__half{});
    case ElementType::bfloat16: return launch(__nv_bfloat16{});
  }
  return cudaErrorInvalidValue;
}

// launch(first{}, second{}) for the two types.
template <typename Launch>
cudaError_t with_element_types(ElementType first, ElementType second, Launch&& launch) {
  return with_element_type(first, [&](auto first_value) {
    return with_element_type(second, [&](auto second_value) { return launch(first_value, second_value); });
  });
}

}  // namespace dvfslab::torch_backend::kernels
