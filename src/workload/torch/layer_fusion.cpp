#include "workload/torch/layer_fusion.hpp"

#include <torch/nn/modules/linear.h>

#include "dvfslab/error.hpp"
#include "workload/torch/conv_unit.hpp"
#include "workload/torch/max_pool.hpp"

namespace dvfslab::torch_backend {

int fuse_for_training(torch::nn::Module& network) {
  int fused = 0;
  for (const auto& module : network.modules()) {
    if (auto* unit = module->as<ConvUnit>(); unit != nullptr && unit->fuse_for_training()) ++fused;
  }
  return fused;
}

int use_own_pool_kernels(torch::nn::Module& network) {
  int switched = 0;
  for (const auto& module : network.modules()) {
    if (auto* pool = module->as<MaxPool>()) {
      pool->use_own_kernel();
      ++switched;
    }
  }
  return switched;
}

int freeze_for_inference(torch::nn::Module& network, torch::ScalarType dtype) {
  if (network.is_training()) throw Error("freeze_for_inference needs a network in eval mode");
  int frozen = 0;
  for (const auto& module : network.modules()) {
    if (auto* block = dynamic_cast<FreezableBlock*>(module.get())) {
      block->freeze(dtype);
      ++frozen;
    } else if (auto* linear = module->as<torch::nn::Linear>()) {
      linear->to(dtype);
    }
  }
  return frozen;
}

}  // namespace dvfslab::torch_backend
