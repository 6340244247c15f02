#include "workload/sim/profiles.hpp"

#include <fmt/format.h>

#include "dvfslab/error.hpp"

namespace dvfslab::sim {

// Item times are the inverse of typical fp32 throughputs on a Tesla V100 (Caffe
// training, TensorRT inference). Compute fractions δ keep the order of how
// compute-bound the networks are; their level is set by bench/sim_calibration
// against the published sweeps (median slowdown at the V100's energy optimum, the
// V100 power-limit slowdowns, and the GDDR Pascal memory-clock sensitivity for the
// RTX 2080 Ti). Core activities are fitted to the power each case drew on a real
// H200 at its default settings (docs/results/h200/default_sweep; VGG-16 inference,
// power capped there, set just above the cap); memory activities are ordered by
// how memory-heavy the network is. docs/simulation.md has the table.
const std::vector<NetworkProfile>& network_profiles() {
  static const std::vector<NetworkProfile> profiles = {
      {"alexnet",
       "images",
       0,
       "AlexNet (simulated profile): large FC layers, memory-heavy",
       ModeProfile{0.33, 4.0, 0.37, 0.76, 0.95, 64, {128, 256, 512, 1024}},
       {0.083, 1.0, 0.32, 0.75, 1.00, 32, {256}}},
      {"vgg16",
       "images",
       0,
       "VGG-16 (simulated profile): dense 3x3 convolutions, compute-heavy",
       ModeProfile{4.35, 3.0, 0.74, 0.81, 0.65, 8, {16, 32, 64}},
       {1.25, 1.0, 0.64, 0.89, 0.85, 32, {256}}},
      {"googlenet",
       "images",
       0,
       "GoogLeNet (simulated profile): inception blocks, mixed",
       ModeProfile{1.54, 3.0, 0.55, 0.69, 0.75, 16, {32, 64, 128}},
       {0.31, 1.0, 0.46, 0.72, 0.85, 32, {256}}},
      {"resnet50",
       "images",
       0,
       "ResNet-50 (simulated profile): convolutions plus memory-bound normalisation",
       ModeProfile{2.63, 3.0, 0.55, 0.76, 0.85, 8, {16, 32, 64}},
       {0.71, 1.0, 0.51, 0.77, 0.90, 32, {256}}},
      {"bert_base",
       "tokens",
       128,
       "BERT-base (simulated profile): encoder, 128-token sequences",
       ModeProfile{0.040, 3.0, 0.60, 0.51, 0.75, 4, {8, 16, 32}},
       {0.010, 1.0, 0.46, 0.60, 0.85, 8, {32, 64}}},
      {"gpt2_small",
       "tokens",
       512,
       "GPT-2 small (simulated profile): decoder, 512-token sequences",
       ModeProfile{0.083, 3.0, 0.55, 0.68, 0.80, 2, {4, 8, 16}},
       {0.020, 1.0, 0.41, 0.68, 0.90, 4, {8, 16}}},
      // A Llama-style decoder of about 125 M parameters (the `125m` preset of
      // `run-workload llama`) in its two serving phases; docs/simulation.md says
      // where each value comes from. Added after the calibration, so not part of it.
      {"llama_prefill",
       "tokens",
       512,
       "Llama-style decoder ~125M (simulated profile): training, and prompt prefill (compute-bound GEMMs)",
       ModeProfile{0.096, 3.0, 0.70, 0.80, 0.75, 2, {4, 8, 16}},
       {0.032, 1.0, 0.85, 0.85, 0.45, 4, {8, 16, 32}},
       false},
      {"llama_decode",
       "tokens",
       1,
       "Llama-style decoder ~125M (simulated profile): token-by-token decode with a KV cache "
       "(every step reads every weight; memory- and launch-bound), inference only",
       std::nullopt,
       {0.0086, 0.9, 0.15, 0.30, 0.90, 64, {8, 16, 32, 64}},
       false},
  };
  return profiles;
}

const NetworkProfile& network_profile(std::string_view name) {
  std::string names;
  for (const auto& profile : network_profiles()) {
    if (profile.name == name) return profile;
    names += (names.empty() ? "" : ", ") + profile.name;
  }
  throw ConfigError(fmt::format("unknown simulated workload '{}': choose one of {}", name, names));
}

}  // namespace dvfslab::sim
