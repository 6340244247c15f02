#include "workload/torch/model_catalog.hpp"

#include <string>

#include <torch/nn/module.h>

#include "dvfslab/error.hpp"
#include "dvfslab/torch_workloads.hpp"
#include "workload/torch/llama.hpp"
#include "workload/torch/model_workload.hpp"
#include "workload/torch/torch_errors.hpp"

namespace dvfslab::torch_backend {

void init_transformer_weights(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : module.named_parameters()) {
    if (parameter.value().dim() >= 2) {
      parameter.value().normal_(0.0, 0.02);
    } else if (parameter.key().ends_with("bias")) {
      parameter.value().zero_();
    }
  }
}

const std::vector<ModelSpec>& model_specs() {
  // Image limits: below min_size a pooling stage would have nothing left to pool.
  static const std::vector<ModelSpec> specs = {
      {"alexnet", "AlexNet (torchvision layout), 1000 classes", InputKind::images,
       OptimizerKind::sgd_momentum, 128, 224, 64, 1024, 0, make_alexnet},
      {"vgg16", "VGG-16 without batch norm (torchvision layout), 1000 classes", InputKind::images,
       OptimizerKind::sgd_momentum, 128, 224, 32, 1024, 0, make_vgg16},
      {"googlenet", "GoogLeNet / Inception v1 with batch norm, no auxiliary heads (torchvision layout)",
       InputKind::images, OptimizerKind::sgd_momentum, 128, 224, 32, 1024, 0, make_googlenet},
      {"resnet50", "ResNet-50 v1.5 (torchvision layout), 1000 classes", InputKind::images,
       OptimizerKind::sgd_momentum, 128, 224, 32, 1024, 0, make_resnet50},
      {"bert_base", "BERT-base encoder with pooler; trains a masked-LM loss over every token",
       InputKind::tokens, OptimizerKind::adamw, 32, 128, 1, bert_max_positions, bert_vocabulary,
       make_bert_base},
      {"gpt2_small", "GPT-2 small language model with tied embeddings; trains next-token prediction",
       InputKind::tokens, OptimizerKind::adamw, 8, 1024, 1, gpt2_max_positions, gpt2_vocabulary,
       make_gpt2_small},
  };
  return specs;
}

const std::vector<ModelSpec>& llama_specs() {
  static const std::vector<ModelSpec> specs = [] {
    std::vector<ModelSpec> made;
    for (const auto& config : llama_presets()) {
      made.push_back({"llama",
                      "Llama-style decoder (RMSNorm, rotary positions, grouped-query attention, SwiGLU); "
                      "trains next-token prediction or generates (--mode generate); presets tiny, 125m "
                      "(default), 1b, 7b",
                      InputKind::tokens, OptimizerKind::adamw, 8, 1024, 1, config.max_positions,
                      config.vocabulary, [&config] { return std::shared_ptr<Network>(make_llama(config)); }});
    }
    return made;
  }();
  return specs;
}

const ModelSpec& find_model(std::string_view name, std::string_view preset) {
  if (name == "llama") {
    const auto& presets = llama_presets();
    const auto& config = find_llama_preset(preset.empty() ? default_llama_preset : preset);
    return llama_specs().at(static_cast<std::size_t>(&config - presets.data()));
  }
  std::string names;
  for (const auto& spec : model_specs()) {
    if (spec.name == name) {
      if (!preset.empty()) throw ConfigError(spec.name + " has no presets: --preset is for llama");
      return spec;
    }
    names += (names.empty() ? "" : ", ") + spec.name;
  }
  throw ConfigError("unknown workload '" + std::string(name) + "': choose one of " + names + ", llama");
}

std::string preset_of(const ModelSpec& spec) {
  const auto& specs = llama_specs();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (&specs[i] == &spec) return llama_presets()[i].preset;
  }
  return "";
}

}  // namespace dvfslab::torch_backend

namespace dvfslab {

std::vector<WorkloadInfo> torch_workload_infos() {
  std::vector<WorkloadInfo> infos;
  auto specs = torch_backend::model_specs();
  specs.push_back(torch_backend::find_model("llama"));
  for (const auto& spec : specs) {
    const bool images = spec.input == torch_backend::InputKind::images;
    infos.push_back(WorkloadInfo{
        spec.name, images ? "images" : "tokens", spec.default_batch,
        spec.description + "; default " +
            (images ? std::to_string(spec.default_size) + "x" + std::to_string(spec.default_size) + " images"
                    : std::to_string(spec.default_size) + " tokens per sequence")});
  }
  return infos;
}

std::unique_ptr<TorchWorkload> create_torch_workload(const Case& workload_case,
                                                     const WorkloadOptions& options,
                                                     const std::string& preset) {
  const auto& spec = torch_backend::find_model(workload_case.workload, preset);
  return std::make_unique<torch_backend::ModelWorkload>(spec, workload_case, options);
}

void add_torch_workloads(WorkloadRegistry& registry) {
  for (const auto& info : torch_workload_infos()) {
    registry.add(
        info, [](const Gpu& gpu) { return !gpu.identity().simulated; },
        [](const Case& workload_case, Gpu&, const WorkloadOptions& options) -> std::unique_ptr<Workload> {
          std::unique_ptr<TorchWorkload> workload;
          explain_torch_errors([&] { workload = create_torch_workload(workload_case, options); });
          return with_explained_errors(std::move(workload));
        });
  }
}

}  // namespace dvfslab
