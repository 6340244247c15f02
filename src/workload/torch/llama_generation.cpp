#include "workload/torch/llama_generation.hpp"

#include <optional>
#include <string>

#include "dvfslab/error.hpp"
#include "workload/torch/model_catalog.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

torch::Tensor next_tokens(const torch::Tensor& logits) {
  return logits.select(1, logits.size(1) - 1).argmax(-1, /*keepdim=*/true);
}

}  // namespace

LlamaGenerator::LlamaGenerator(std::unique_ptr<ModelWorkload> workload, int generated_length)
    : workload_(std::move(workload)),
      model_(dynamic_cast<Llama&>(workload_->network())),
      generated_length_(generated_length),
      prompts_(workload_->input()) {
  const auto positions = prompts_.size(1) + generated_length;
  if (positions > model_.config().max_positions) {
    throw ConfigError("llama " + model_.config().preset + " takes at most " +
                      std::to_string(model_.config().max_positions) +
                      " positions: shorten --prompt-len or --gen-len");
  }
  cache_ =
      model_.make_cache(prompts_.size(0), positions, workload_->autocast_dtype().value_or(torch::kFloat));
  generated_ = torch::empty({prompts_.size(0), 1 + generated_length}, prompts_.options());
}

void LlamaGenerator::prefill() {
  torch::NoGradGuard no_grad;
  std::optional<AutocastScope> autocast;
  if (const auto dtype = workload_->autocast_dtype()) autocast.emplace(workload_->device().type(), *dtype);
  cache_.length = 0;
  first_token_ = next_tokens(model_.forward(prompts_, &cache_));
}

void LlamaGenerator::decode() {
  if (!first_token_.defined()) throw Error("decode needs a prefill first");
  torch::NoGradGuard no_grad;
  std::optional<AutocastScope> autocast;
  if (const auto dtype = workload_->autocast_dtype()) autocast.emplace(workload_->device().type(), *dtype);
  // Each decode starts again from the prompts' cache, so repeated decodes do equal work.
  cache_.length = prompts_.size(1);
  generated_.narrow(1, 0, 1).copy_(first_token_);
  for (int step = 0; step < generated_length_; ++step) {
    generated_.narrow(1, step + 1, 1)
        .copy_(next_tokens(model_.forward(generated_.narrow(1, step, 1), &cache_)));
  }
}

void LlamaGenerator::synchronize() { torch_backend::synchronize(workload_->device()); }

torch::Tensor LlamaGenerator::sequences() const { return torch::cat({prompts_, generated_}, 1); }

}  // namespace dvfslab::torch_backend

namespace dvfslab {

std::unique_ptr<TorchGenerator> create_torch_generator(const Case& workload_case,
                                                       const WorkloadOptions& options,
                                                       const std::string& preset, int prompt_length,
                                                       int generated_length) {
  if (workload_case.workload != "llama") {
    throw ConfigError(workload_case.workload + " does not generate text: --mode generate is for llama");
  }
  if (prompt_length < 1) throw ConfigError("--prompt-len must be at least 1");
  if (generated_length < 1) throw ConfigError("--gen-len must be at least 1");
  if (options.sequence_length != 0) {
    throw ConfigError("--mode generate takes --prompt-len and --gen-len, not --seq-len");
  }
  Case inference = workload_case;
  inference.mode = Mode::infer;
  WorkloadOptions prompts = options;
  prompts.sequence_length = prompt_length;
  // The graph would fix the cache length; decode steps run eagerly.
  prompts.cuda_graph = false;
  const auto& spec = torch_backend::find_model(workload_case.workload, preset);
  return std::make_unique<torch_backend::LlamaGenerator>(
      std::make_unique<torch_backend::ModelWorkload>(spec, inference, prompts), generated_length);
}

}  // namespace dvfslab
