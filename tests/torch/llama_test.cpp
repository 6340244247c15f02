// The llama decoder against a plain reference of the same architecture on the
// same weights, its KV-cache generation against recomputing every sequence, its
// presets and its training.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "dvfslab/error.hpp"
#include "dvfslab/torch_workloads.hpp"
#include "workload/torch/llama.hpp"
#include "workload/torch/llama_generation.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {
namespace {

WorkloadOptions cpu_options() {
  WorkloadOptions options;
  options.torch_device = "cpu";
  return options;
}

// Written from the architecture's definition, one head and one position pair at a
// time, sharing nothing with the model's code but its weights.
class ReferenceLlama {
 public:
  explicit ReferenceLlama(Llama& model) : config_(model.config()) {
    for (const auto& parameter : model.named_parameters()) weights_[parameter.key()] = parameter.value();
  }

  torch::Tensor logits(const torch::Tensor& tokens) const {
    const auto batch = tokens.size(0), count = tokens.size(1);
    auto x = weights_.at("embed_tokens.weight").index_select(0, tokens.flatten()).view({batch, count, -1});
    for (int layer = 0; layer < config_.layers; ++layer) {
      const auto weight = [&](const std::string& name) {
        return weights_.at("layers" + std::to_string(layer) + "." + name);
      };
      const auto h = norm(x, weight("input_layernorm"));
      // qkv_proj holds the query, key and value rows in that order; gate_up_proj
      // the gate's rows, then up's.
      const int kv_width = config_.kv_heads * config_.head_dim();
      const auto query_key_value = weight("qkv_proj.weight");
      const auto query = rotate(h.matmul(query_key_value.narrow(0, 0, config_.hidden).t()), config_.heads);
      const auto key =
          rotate(h.matmul(query_key_value.narrow(0, config_.hidden, kv_width).t()), config_.kv_heads);
      const auto value = h.matmul(query_key_value.narrow(0, config_.hidden + kv_width, kv_width).t());
      const auto mixed = attend(query, key, value);
      x = x + mixed.matmul(weight("o_proj.weight").t());
      const auto m = norm(x, weight("post_attention_layernorm"));
      const auto gate_up = weight("gate_up_proj.weight");
      const auto gate = m.matmul(gate_up.narrow(0, 0, config_.mlp_hidden).t());
      const auto swish = gate / (1 + torch::exp(-gate));
      x = x + (swish * m.matmul(gate_up.narrow(0, config_.mlp_hidden, config_.mlp_hidden).t()))
                  .matmul(weight("down_proj.weight").t());
    }
    return norm(x, weights_.at("norm")).matmul(weights_.at("lm_head.weight").t());
  }

 private:
  static torch::Tensor norm(const torch::Tensor& x, const torch::Tensor& gain) {
    return x / torch::sqrt(x.square().mean(-1, true) + 1e-5) * gain;
  }

  // Feature i pairs with feature i + d/2 and turns by position · 10000^(−2i/d).
  torch::Tensor rotate(const torch::Tensor& x, int heads) const {
    const int d = config_.head_dim();
    auto out = x.clone();
    for (int head = 0; head < heads; ++head) {
      for (int i = 0; i < d / 2; ++i) {
        const auto first = head * d + i, second = first + d / 2;
        for (std::int64_t position = 0; position < x.size(1); ++position) {
          const double angle = static_cast<double>(position) * std::pow(10000.0, -2.0 * i / d);
          const auto a = x.select(1, position).select(-1, first);
          const auto b = x.select(1, position).select(-1, second);
          out.select(1, position).select(-1, first).copy_(a * std::cos(angle) - b * std::sin(angle));
          out.select(1, position).select(-1, second).copy_(b * std::cos(angle) + a * std::sin(angle));
        }
      }
    }
    return out;
  }

  // Causal softmax attention per query head, each reading its group's key/value head.
  torch::Tensor attend(const torch::Tensor& query, const torch::Tensor& key,
                       const torch::Tensor& value) const {
    const int d = config_.head_dim();
    const int per_kv_head = config_.heads / config_.kv_heads;
    const auto count = query.size(1);
    const auto future = torch::ones({count, count}, torch::kBool).triu(1);
    std::vector<torch::Tensor> heads;
    for (int head = 0; head < config_.heads; ++head) {
      const int kv_head = head / per_kv_head;
      const auto q = query.narrow(-1, head * d, d);
      const auto k = key.narrow(-1, kv_head * d, d);
      const auto v = value.narrow(-1, kv_head * d, d);
      const auto scores = q.matmul(k.transpose(1, 2)) / std::sqrt(static_cast<double>(d));
      heads.push_back(
          torch::softmax(scores.masked_fill(future, -std::numeric_limits<double>::infinity()), -1).matmul(v));
    }
    return torch::cat(heads, -1);
  }

  LlamaConfig config_;
  std::map<std::string, torch::Tensor> weights_;
};

TEST(Llama, LogitsMatchThePlainReference) {
  torch::manual_seed(7);
  auto model = make_llama(find_llama_preset("tiny"));
  model->eval();
  const auto tokens = torch::randint(256, {2, 12}, torch::kLong);
  torch::NoGradGuard no_grad;
  const auto logits = model->infer(tokens);
  ASSERT_EQ(logits.sizes().vec(), (std::vector<std::int64_t>{2, 12, 256}));
  const auto expected = ReferenceLlama(*model).logits(tokens);
  EXPECT_TRUE(torch::allclose(logits, expected, 1e-4, 1e-4))
      << "largest difference " << (logits - expected).abs().max().item<double>();
}

// The CUDA forms of the parts (a fused RMSNorm, grouped-query attention reading
// the shared key/value heads in place, from LibTorch 2.4/2.5 on) against the same
// weights on the CPU, forward and backward, and in bf16 against the reference.
TEST(Llama, CudaLogitsAndGradientsMatchTheCpu) {
  if (!cuda_usable()) GTEST_SKIP() << "needs a CUDA GPU and a LibTorch with CUDA";
  set_tf32(false);
  torch::manual_seed(11);
  auto cpu_model = make_llama(find_llama_preset("tiny"));
  auto gpu_model = make_llama(find_llama_preset("tiny"));
  {
    torch::NoGradGuard no_grad;
    const auto source = cpu_model->named_parameters();
    for (auto& parameter : gpu_model->named_parameters()) parameter.value().copy_(source[parameter.key()]);
  }
  gpu_model->to(torch::kCUDA);
  const auto tokens = torch::randint(256, {2, 12}, torch::kLong);
  const auto next = torch::randint(256, {2, 12}, torch::kLong);
  cpu_model->loss(tokens, next).backward();
  gpu_model->loss(tokens.cuda(), next.cuda()).backward();
  const auto gpu_gradients = gpu_model->named_parameters();
  for (const auto& parameter : cpu_model->named_parameters()) {
    const auto gpu_gradient = gpu_gradients[parameter.key()].grad().cpu();
    EXPECT_TRUE(torch::allclose(gpu_gradient, parameter.value().grad(), 1e-3, 1e-5))
        << parameter.key() << ": largest difference "
        << (gpu_gradient - parameter.value().grad()).abs().max().item<double>();
  }

  torch::NoGradGuard no_grad;
  const auto expected = ReferenceLlama(*cpu_model).logits(tokens);
  EXPECT_TRUE(torch::allclose(gpu_model->infer(tokens.cuda()).cpu(), expected, 1e-4, 1e-4));
  AutocastScope bf16(torch::kCUDA, torch::kBFloat16);
  const auto low_precision = gpu_model->infer(tokens.cuda()).to(torch::kFloat).cpu();
  EXPECT_LT((low_precision - expected).abs().max().item<double>(),
            0.05 * expected.abs().max().item<double>());
}

TEST(Llama, CachedGenerationEqualsRecomputingEverySequence) {
  auto generator =
      create_torch_generator(Case{"llama", 2, Mode::infer, Precision::fp32}, cpu_options(), "tiny", 8, 8);
  auto& llama = dynamic_cast<LlamaGenerator&>(*generator);
  EXPECT_EQ(generator->prefill_tokens(), 16);
  EXPECT_EQ(generator->decode_tokens(), 16);
  generator->prefill();
  generator->decode();
  const auto cached = llama.sequences();
  ASSERT_EQ(cached.sizes().vec(), (std::vector<std::int64_t>{2, 17}));

  torch::NoGradGuard no_grad;
  auto recomputed = cached.narrow(1, 0, 8);
  for (int token = 0; token < 9; ++token) {
    const auto logits = llama.model().infer(recomputed);
    recomputed = torch::cat({recomputed, logits.select(1, logits.size(1) - 1).argmax(-1, true)}, 1);
  }
  EXPECT_TRUE(torch::equal(cached, recomputed)) << cached << "\n" << recomputed;

  // A second decode from the same prefill repeats the same work and tokens.
  generator->decode();
  EXPECT_TRUE(torch::equal(llama.sequences(), cached));
}

TEST(Llama, PresetSizesFollowFromTheirWidths) {
  const std::map<std::string, std::int64_t> expected = {
      {"tiny", 125'248}, {"125m", 124'668'672}, {"1b", 1'104'218'112}, {"7b", 3'097'628'672}};
  for (const auto& preset : llama_presets()) {
    EXPECT_EQ(preset.parameter_count(), expected.at(preset.preset)) << preset.preset;
  }
  auto tiny = make_llama(find_llama_preset("tiny"));
  std::int64_t built = 0;
  for (const auto& parameter : tiny->parameters()) built += parameter.numel();
  EXPECT_EQ(built, 125'248);
}

TEST(Llama, TrainingLowersTheLoss) {
  auto options = cpu_options();
  options.sequence_length = 16;
  auto workload = create_torch_workload(Case{"llama", 2, Mode::train, Precision::fp32}, options, "tiny");
  EXPECT_EQ(workload->run_info().preset, "tiny");
  workload->run_iterations(1);
  const double first = workload->last_loss();
  workload->run_iterations(19);
  EXPECT_LT(workload->last_loss(), first);
}

TEST(Llama, Bf16GenerationRunsOnTheCpu) {
  auto generator =
      create_torch_generator(Case{"llama", 1, Mode::infer, Precision::bf16}, cpu_options(), "tiny", 4, 3);
  generator->prefill();
  generator->decode();
  const auto sequences = dynamic_cast<LlamaGenerator&>(*generator).sequences();
  EXPECT_EQ(sequences.size(1), 8);
  EXPECT_TRUE((sequences >= 0).all().item<bool>() && (sequences < 256).all().item<bool>());
}

TEST(Llama, BadPresetsAndLengthsAreConfigErrors) {
  const Case llama{"llama", 1, Mode::infer, Precision::fp32};
  EXPECT_THROW(create_torch_workload(llama, cpu_options(), "13b"), ConfigError);
  EXPECT_THROW(
      create_torch_workload(Case{"resnet50", 1, Mode::infer, Precision::fp32}, cpu_options(), "tiny"),
      ConfigError);
  EXPECT_THROW(
      create_torch_generator(Case{"gpt2_small", 1, Mode::infer, Precision::fp32}, cpu_options(), "", 8, 8),
      ConfigError);
  EXPECT_THROW(create_torch_generator(llama, cpu_options(), "tiny", 500, 100), ConfigError);
  EXPECT_THROW(create_torch_generator(llama, cpu_options(), "tiny", 8, 0), ConfigError);
}

}  // namespace
}  // namespace dvfslab::torch_backend
