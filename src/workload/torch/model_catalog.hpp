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
// The llama decoder, one spec per size preset (llama_presets()), in their order.
const std::vector<ModelSpec>& llama_specs();
// Throws ConfigError listing the choices when `name` is unknown, or when `preset`
// is unknown or given to a model without presets ("" = the model's default).
const ModelSpec& find_model(std::string_view name, std::string_view preset = {});
// The preset `spec` was made for; "" for models without presets.
std::string preset_of(const ModelSpec& spec);

}  // namespace dvfslab::torch_backend
