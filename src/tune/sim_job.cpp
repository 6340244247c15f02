// The simulated job: built-in simulated workloads run iteration by iteration on a
// simulated GPU, so a phase change and the tuner's answer to it are deterministic.
#include <fmt/format.h>

#include <charconv>

#include "dvfslab/error.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/sim_workloads.hpp"
#include "dvfslab/tune_job.hpp"

namespace dvfslab {
namespace {

constexpr std::int64_t default_phase_iterations = 1000;
constexpr std::int64_t most_phase_iterations = 100'000'000;

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

template <typename Integer>
bool read_integer(std::string_view text, Integer& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

SimJobPhase parse_phase(std::string_view text) {
  const auto fault = [&](const std::string& what) {
    return ConfigError(fmt::format(
        "--sim-job phase '{}': {} (PHASE = WORKLOAD[/train|/infer][/bBATCH][/PRECISION][:ITERATIONS])", text,
        what));
  };
  SimJobPhase phase;
  phase.iterations = default_phase_iterations;
  std::string_view spec = text;
  if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    spec = text.substr(0, colon);
    if (!read_integer(text.substr(colon + 1), phase.iterations) || phase.iterations < 1 ||
        phase.iterations > most_phase_iterations)
      throw fault(fmt::format("the iterations must be an integer from 1 to {}", most_phase_iterations));
  }
  const auto parts = split(spec, '/');
  if (parts.front().empty())
    throw fault("no workload; choose one of: " + fmt::format("{}", fmt::join(sim_workload_names(), ", ")));
  phase.workload_case.workload = std::string(parts.front());
  phase.workload_case.batch = 64;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view part = parts[i];
    if (part == "train" || part == "infer") {
      phase.workload_case.mode = parse_mode(part);
    } else if (part.size() > 1 && part.front() == 'b' && part != "bf16") {
      if (!read_integer(part.substr(1), phase.workload_case.batch) || phase.workload_case.batch < 1 ||
          phase.workload_case.batch > 65536)
        throw fault("the batch must be b1 to b65536");
    } else {
      try {
        phase.workload_case.precision = parse_precision(part);
      } catch (const ConfigError&) {
        throw fault(fmt::format(
            "'{}' is neither train/infer, bBATCH nor a precision (fp32, tf32, bf16, fp16)", part));
      }
    }
  }
  return phase;
}

}  // namespace

std::vector<SimJobPhase> parse_sim_job(std::string_view text) {
  if (text.empty())
    throw ConfigError("--sim-job is empty; give PHASE[,PHASE...], e.g. resnet50/train/b64:2000");
  std::vector<SimJobPhase> phases;
  for (std::string_view part : split(text, ',')) phases.push_back(parse_phase(part));
  return phases;
}

void run_sim_job(Gpu& gpu, Tuner& tuner, const std::vector<SimJobPhase>& phases) {
  auto* sim = dynamic_cast<SimGpu*>(&gpu);
  if (sim == nullptr || sim->time_mode() != SimTimeMode::virtual_time)
    throw ConfigError(
        fmt::format("--sim-job runs on a simulated GPU (--device sim:NAME), not on {}", gpu.identity().name));
  struct Prepared {
    SimKernel kernel;
    double items;
    std::int64_t iterations;
  };
  std::vector<Prepared> prepared;  // every phase checked before the job starts
  for (const SimJobPhase& phase : phases) {
    prepared.push_back(Prepared{sim_workload_kernel(phase.workload_case, sim->spec()),
                                sim_workload_items_per_iteration(phase.workload_case), phase.iterations});
  }
  for (const Prepared& phase : prepared) {
    for (std::int64_t i = 0; i < phase.iterations; ++i) {
      tuner.step_begin();
      sim->run(phase.kernel);
      tuner.step_end(phase.items);
    }
  }
}

}  // namespace dvfslab
