#include "meter/gpu_totals.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>

namespace dvfslab::meter {
namespace {

using Field = std::optional<double> Measurement::*;

std::optional<double> sum_over(const std::vector<GpuMeasurement>& gpus, Field field) {
  double sum = 0;
  for (const auto& gpu : gpus) {
    const auto& value = gpu.measurement.*field;
    if (!value) return std::nullopt;
    sum += *value;
  }
  return sum;
}

// The mean over the GPUs that report the field; absent when none does.
std::optional<double> mean_over(const std::vector<GpuMeasurement>& gpus, Field field) {
  double sum = 0;
  int count = 0;
  for (const auto& gpu : gpus) {
    if (const auto& value = gpu.measurement.*field) {
      sum += *value;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

// The extreme (by `first`) over the GPUs that report the field.
template <typename T, typename Before>
std::optional<T> extreme_over(const std::vector<GpuMeasurement>& gpus, std::optional<T> Measurement::*field,
                              Before first) {
  std::optional<T> extreme;
  for (const auto& gpu : gpus) {
    const auto& value = gpu.measurement.*field;
    if (value && (!extreme || first(*value, *extreme))) extreme = value;
  }
  return extreme;
}

}  // namespace

Measurement job_totals(std::vector<GpuMeasurement> per_gpu) {
  if (per_gpu.empty()) throw std::logic_error("job_totals needs at least one GPU");
  Measurement total;
  const Measurement& first = per_gpu.front().measurement;
  total.name = first.name;
  // Every GPU counted the job's iterations: they are the job's once.
  total.iterations = first.iterations;
  total.items = first.items;
  for (const auto& gpu : per_gpu) {
    const Measurement& m = gpu.measurement;
    total.duration_s = std::max(total.duration_s, m.duration_s);
    total.samples = std::max(total.samples, m.samples);
    total.flags |= m.flags;
    for (const auto& [reason, fraction] : m.throttle_fraction) {
      double& most = total.throttle_fraction[reason];
      most = std::max(most, fraction);
    }
  }
  total.energy_j = sum_over(per_gpu, &Measurement::energy_j);
  total.energy_integrated_j = sum_over(per_gpu, &Measurement::energy_integrated_j);
  total.energy_error_j = sum_over(per_gpu, &Measurement::energy_error_j);
  total.mean_power_w = sum_over(per_gpu, &Measurement::mean_power_w);
  total.peak_power_w = sum_over(per_gpu, &Measurement::peak_power_w);
  total.sm_mhz_mean = mean_over(per_gpu, &Measurement::sm_mhz_mean);
  total.mem_mhz_mean = mean_over(per_gpu, &Measurement::mem_mhz_mean);
  total.sm_mhz_min = extreme_over(per_gpu, &Measurement::sm_mhz_min, std::less<>());
  total.temperature_c_min = extreme_over(per_gpu, &Measurement::temperature_c_min, std::less<>());
  total.temperature_c_max = extreme_over(per_gpu, &Measurement::temperature_c_max, std::greater<>());
  total.gpus = std::move(per_gpu);
  return total;
}

}  // namespace dvfslab::meter
