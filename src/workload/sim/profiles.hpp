#pragma once
// The parameter table behind the simulated workloads (docs/simulation.md).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dvfslab::sim {

// How one network behaves in one mode on a Tesla V100 at its default clocks in
// fp32; sim_workload_kernel turns it into a SimKernel for any batch and GPU.
struct ModeProfile {
  double item_ms = 0;           // scalable time per item at full utilisation
  double fixed_ms = 0;          // per-iteration time no GPU clock changes (host, launches)
  double compute_fraction = 0;  // δ: share of the scalable time bound by the SM clock
  double core_activity = 0;     // at full utilisation
  double memory_activity = 0;   // at full utilisation
  double half_batch = 0;        // batch at which the GPU is half utilised
  std::vector<int> study_batches;
};

struct NetworkProfile {
  std::string name;
  std::string item_unit;        // "images" or "tokens"
  int default_sequence_length;  // tokens per sample; 0 for images
  std::string description;
  std::optional<ModeProfile> train;  // none for inference-only work (decode with a KV cache)
  ModeProfile infer;
  // Whether bench/sim_calibration fits the twins' constants to it: the networks the
  // calibration was made with, not those added after it.
  bool calibrated = true;
};

const std::vector<NetworkProfile>& network_profiles();
// Throws ConfigError naming the known workloads.
const NetworkProfile& network_profile(std::string_view name);

}  // namespace dvfslab::sim
