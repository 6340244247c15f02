#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/types.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "dvfslab/error.hpp"
#include "dvfslab/torch_workloads.hpp"

namespace dvfslab {
namespace {

namespace profiler = torch::autograd::profiler;
namespace profiler_impl = torch::profiler::impl;

// LibTorch 2.x reports event times in nanoseconds, 1.13 in microseconds.
template <typename Event>
double start_ms(const Event& event) {
  if constexpr (requires { event.startNs(); }) {
    return static_cast<double>(event.startNs()) / 1e6;
  } else {
    return static_cast<double>(event.startUs()) / 1e3;
  }
}

template <typename Event>
double duration_ms(const Event& event) {
  if constexpr (requires { event.durationNs(); }) {
    return static_cast<double>(event.durationNs()) / 1e6;
  } else {
    return static_cast<double>(event.durationUs()) / 1e3;
  }
}

struct Span {
  std::string name;
  std::uint64_t thread = 0;
  double start_ms = 0;
  double end_ms = 0;
};

// Self time of nested CPU operators: each span's time minus that of the spans
// directly inside it on the same thread.
std::map<std::string, KernelTime> self_times(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.thread != b.thread ? a.thread < b.thread
                                : (a.start_ms != b.start_ms ? a.start_ms < b.start_ms : a.end_ms > b.end_ms);
  });
  std::map<std::string, KernelTime> totals;
  std::vector<std::pair<const Span*, double>> open;  // span, its self time so far
  const auto close = [&] {
    auto& entry = totals[open.back().first->name];
    entry.name = open.back().first->name;
    ++entry.calls;
    entry.total_ms += std::max(0.0, open.back().second);
    open.pop_back();
  };
  for (const auto& span : spans) {
    while (!open.empty() &&
           (open.back().first->thread != span.thread || open.back().first->end_ms <= span.start_ms)) {
      close();
    }
    if (!open.empty()) open.back().second -= span.end_ms - span.start_ms;
    open.emplace_back(&span, span.end_ms - span.start_ms);
  }
  while (!open.empty()) close();
  return totals;
}

}  // namespace

KernelProfile profile_kernels(TorchWorkload& workload, std::int64_t iterations) {
  if (iterations < 1) throw ConfigError("a kernel profile needs at least one iteration");
  const bool gpu = workload.run_info().device != "cpu";
  const profiler_impl::ProfilerConfig config(profiler_impl::ProfilerState::KINETO);
  const std::set<profiler_impl::ActivityType> activities{
      gpu ? profiler_impl::ActivityType::CUDA : profiler_impl::ActivityType::CPU};
  workload.prepare();
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
  try {
    workload.run_iterations(iterations);
  } catch (...) {
    profiler::disableProfiler();
    throw;
  }
  const auto result = profiler::disableProfiler();

  KernelProfile profile{gpu, iterations, {}};
  std::map<std::string, KernelTime> totals;
  std::vector<Span> spans;
  for (const auto& event : result->events()) {
    const bool on_gpu = event.deviceType() != c10::DeviceType::CPU;
    if (on_gpu != gpu) continue;
    if (gpu) {
      auto& entry = totals[event.name()];
      entry.name = event.name();
      ++entry.calls;
      entry.total_ms += duration_ms(event);
    } else {
      spans.push_back({event.name(), event.startThreadId(), start_ms(event), start_ms(event) + duration_ms(event)});
    }
  }
  if (!gpu) totals = self_times(std::move(spans));
  if (totals.empty()) {
    throw NotSupportedError(gpu ? "the profiler recorded no GPU kernels: this LibTorch was built without CUPTI"
                                : "the profiler recorded no CPU operators");
  }
  for (auto& [name, entry] : totals) profile.entries.push_back(std::move(entry));
  std::sort(profile.entries.begin(), profile.entries.end(),
            [](const KernelTime& a, const KernelTime& b) { return a.total_ms > b.total_ms; });
  return profile;
}

}  // namespace dvfslab
