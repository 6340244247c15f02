// Opening twins: from a --device spec, or from any TwinSource (dvfslab/twin.hpp).
#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "dvfslab/error.hpp"
#include "dvfslab/twin.hpp"
#include "gpu/twin/model_source.hpp"
#include "gpu/twin/table_source.hpp"
#include "gpu/twin/twin_gpu.hpp"
#include "gpu/twin/twin_spec.hpp"

namespace dvfslab {
namespace {

constexpr double kMaxSigma = 0.25;  // as a spec's noise=25%: clipped draws keep factors positive

void check_options(const TwinOptions& options) {
  const auto sigma_ok = [](double sigma) { return std::isfinite(sigma) && sigma >= 0 && sigma <= kMaxSigma; };
  if (!sigma_ok(options.noise.time_sigma) || !sigma_ok(options.noise.power_sigma)) {
    throw ConfigError(fmt::format("twin noise must be from 0 to {} (relative), not time {} / power {}",
                                  kMaxSigma, options.noise.time_sigma, options.noise.power_sigma));
  }
  if (!(options.sensor_period_s > 0) || !(options.average_power_window_s >= options.sensor_period_s)) {
    throw ConfigError("a twin's sensor period must be above 0 and its averaging window at least one period");
  }
}

template <typename GpuType>
auto& as_twin_gpu(GpuType& gpu) {
  using Twin = std::conditional_t<std::is_const_v<GpuType>, const twin::TwinGpu, twin::TwinGpu>;
  auto* twin_gpu = dynamic_cast<Twin*>(&gpu);
  if (twin_gpu == nullptr) {
    throw ConfigError(
        fmt::format("{} is not a twin: twin workloads need --device twin:FILE.csv", gpu.identity().name));
  }
  return *twin_gpu;
}

}  // namespace

std::unique_ptr<Gpu> make_twin_gpu(std::unique_ptr<TwinSource> source, const TwinOptions& options,
                                   const std::string& device_spec) {
  if (!source) throw ConfigError("a twin needs a source");
  check_options(options);
  return std::make_unique<twin::TwinGpu>(std::move(source), options, device_spec);
}

std::unique_ptr<Gpu> open_twin_gpu(std::string_view spec) {
  const twin::TwinSpec parsed = twin::parse_twin_spec(spec);
  TwinOptions options;
  options.noise = parsed.noise;
  std::unique_ptr<TwinSource> source;
  if (parsed.path.extension() == ".json") {
    source = std::make_unique<twin::ModelSource>(parsed.path, parsed.gpu_name);
  } else {
    source = std::make_unique<twin::TableSource>(parsed.path, parsed.gpu_name);
  }
  return make_twin_gpu(std::move(source), options, "twin:" + std::string(spec));
}

bool is_twin_gpu(const Gpu& gpu) { return dynamic_cast<const twin::TwinGpu*>(&gpu) != nullptr; }

std::optional<TwinRates> twin_rates(const Gpu& twin_gpu, const std::string& workload,
                                    const Setting& setting) {
  const auto& gpu = as_twin_gpu(twin_gpu);
  return gpu.source().rates(workload, gpu.with_defaults_of(workload, setting));
}

bool twin_holds(const Gpu& twin_gpu, const std::string& workload, const Setting& setting) {
  return twin_rates(twin_gpu, workload, setting).has_value();
}

const std::vector<std::string>& twin_workload_keys(const Gpu& twin_gpu) {
  return as_twin_gpu(twin_gpu).source().workloads();
}

std::string twin_origin(const Gpu& twin_gpu) { return as_twin_gpu(twin_gpu).source().origin(); }

void run_twin_work(Gpu& twin_gpu, const std::string& workload, double units) {
  as_twin_gpu(twin_gpu).run(workload, units);
}

}  // namespace dvfslab
