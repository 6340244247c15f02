#pragma once
// The table of built-in networks: what each consumes, its defaults and limits.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workload/torch/network.hpp"

namespace dvfslab::torch_backend {

enum class InputKind { images, tokens };
enum class OptimizerKind { sgd_momentum, adamw };

struct ModelSpec {
  std::string name;
  std::string description;
  InputKind input = InputKind::images;
  OptimizerKind optimizer = OptimizerKind::sgd_momentum;
  int default_batch = 1;
  int default_size = 0;  // image side (pixels) or sequence length (tokens)
  int min_size = 1;
  int max_size = 0;
  int vocabulary = 0;  // token models only
  std::function<std::shared_ptr<Network>()> build;
};

const std::vector<ModelSpec>& model_specs();
// Throws ConfigError listing the names when `name` is unknown.
const ModelSpec& find_model(std::string_view name);

}  // namespace dvfslab::torch_backend
