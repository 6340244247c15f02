#pragma once
// The element types dvfslab's kernels take, named without LibTorch or CUDA types so
// that both sides of the kernel interfaces can include it.
namespace dvfslab::torch_backend::kernels {

enum class ElementType { float32, float16, bfloat16 };

}  // namespace dvfslab::torch_backend::kernels
