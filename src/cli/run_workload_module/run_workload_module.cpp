// The LibTorch half of `dvfslab run-workload`, a module the dvfslab executable
// loads when that command runs (cli/torch_module_interface.hpp says why): runs one
// built-in workload and reports its throughput; with DVFSLAB_MARK_FD set it also
// reports progress markers so that `dvfslab measure -- dvfslab run-workload ...`
// can attribute energy to iterations.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/torch_module_interface.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/output_file.hpp"
#include "dvfslab/torch_workloads.hpp"

namespace dvfslab::cli {
namespace {

// Writes marker lines to the descriptor named by DVFSLAB_MARK_FD, when set.
class MarkerChannel {
 public:
  MarkerChannel() {
    const char* value = std::getenv("DVFSLAB_MARK_FD");
    if (value == nullptr || *value == '\0') return;
    int fd = -1;
    const char* end = value + std::strlen(value);
    const auto [last, error] = std::from_chars(value, end, fd);
    if (error != std::errc() || last != end || fd < 0) {
      throw ConfigError(
          fmt::format("DVFSLAB_MARK_FD='{}' is not a file descriptor number; unset it or fix it", value));
    }
    fd_ = fd;
  }

  bool active() const { return fd_.has_value(); }

  void write_line(const std::string& line) {
    if (!fd_) return;
    const std::string text = line + "\n";
    std::size_t written = 0;
    while (written < text.size()) {
      const auto result = ::write(*fd_, text.data() + written, text.size() - written);
      if (result < 0 && errno == EINTR) continue;
      if (result < 0) {
        throw Error(fmt::format("cannot write progress markers to DVFSLAB_MARK_FD={}: {}", *fd_,
                                std::strerror(errno)));
      }
      written += static_cast<std::size_t>(result);
    }
  }

 private:
  std::optional<int> fd_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// On the CPU one iteration of a full-size model takes seconds, a whole run minutes
// to hours: progress lines on stderr (at most one every few seconds, and the last of
// each phase) show that it runs and how long it has left. On a GPU there is none:
// reporting each iteration would wait for the device and slow the run it measures.
class CpuProgress {
 public:
  void start(const char* phase, std::int64_t total) {
    phase_ = phase;
    total_ = total;
    done_ = 0;
    phase_start_ = std::chrono::steady_clock::now();
    last_line_ = phase_start_;
  }

  void advance(std::int64_t count) {
    done_ += count;
    const auto now = std::chrono::steady_clock::now();
    if (done_ < total_ && now - last_line_ < line_interval) return;
    last_line_ = now;
    const double per_iteration_s = seconds_since(phase_start_) / static_cast<double>(done_);
    const double left_s = per_iteration_s * static_cast<double>(total_ - done_);
    fmt::print(stderr, "dvfslab: run-workload on the CPU: {} {}/{} iterations, {:.2f} s per iteration{}\n",
               phase_, done_, total_, per_iteration_s,
               done_ < total_ ? fmt::format(", about {:.0f} s left", left_s) : "");
  }

 private:
  static constexpr std::chrono::seconds line_interval{5};
  const char* phase_ = "";
  std::int64_t total_ = 0;
  std::int64_t done_ = 0;
  std::chrono::steady_clock::time_point phase_start_;
  std::chrono::steady_clock::time_point last_line_;
};

// Runs `count` iterations; with markers on, in chunks of `mark_every`, each
// reported once the device has finished it (run_iterations waits for it); with
// progress on, one at a time.
void run_marked(TorchWorkload& workload, std::int64_t count, std::int64_t mark_every, MarkerChannel& markers,
                CpuProgress* progress) {
  if (!markers.active() && progress == nullptr) {
    workload.run_iterations(count);
    return;
  }
  const std::int64_t step = markers.active() ? mark_every : 1;
  for (std::int64_t done = 0; done < count;) {
    const auto chunk = std::min(step, count - done);
    workload.run_iterations(chunk);
    done += chunk;
    markers.write_line(fmt::format("dvfslab:iter {} items {}", chunk,
                                   static_cast<double>(chunk) * workload.items_per_iteration()));
    if (progress != nullptr) progress->advance(chunk);
  }
}

// What ran and how: the keys a run's JSON and its kernel profile share.
nlohmann::json run_description(const Case& workload_case, const TorchRunInfo& info) {
  return {{"workload", workload_case.workload},
          {"mode", std::string(to_string(workload_case.mode))},
          {"precision", std::string(to_string(workload_case.precision))},
          {"batch", workload_case.batch},
          {"device", info.device},
          {"cuda_graph", info.cuda_graph},
          {"fused_layers", info.fused_layers},
          {"own_kernel_pools", info.own_kernel_pools}};
}

// Profiles more iterations after the timed ones (the profiler slows what it
// watches, so the timed figures stay without it) and writes the table as JSON.
void write_kernel_profile(TorchWorkload& workload, const RunWorkloadArgs& args, const Case& workload_case) {
  OutputFile file(*args.kernel_profile);
  const auto profile = profile_kernels(workload, args.profile_iterations);
  const auto iterations = static_cast<double>(profile.iterations);
  double total_ms = 0;
  for (const auto& entry : profile.entries) total_ms += entry.total_ms;
  auto entries = nlohmann::json::array();
  for (const auto& entry : profile.entries) {
    entries.push_back({{"name", entry.name},
                       {"calls_per_iteration", static_cast<double>(entry.calls) / iterations},
                       {"ms_per_iteration", entry.total_ms / iterations},
                       {"share", entry.total_ms / total_ms}});
  }
  auto out = run_description(workload_case, workload.run_info());
  out.update(nlohmann::json{
      {"iterations", profile.iterations},
      {"entries_are", profile.gpu_kernels ? "GPU kernels and copies" : "CPU operators, self time"},
      {"total_ms_per_iteration", total_ms / iterations},
      {"entries", entries}});
  file.stream() << out.dump(2) << "\n";
  file.commit();
  if (!args.json) {
    const auto& top = profile.entries.front();
    fmt::print(
        "  kernel profile of {} more iterations in {}: {:.3f} ms per iteration, the most in {} ({:.1f} %)\n",
        profile.iterations, *args.kernel_profile, total_ms / iterations, top.name.substr(0, 80),
        100.0 * top.total_ms / total_ms);
  }
}

void print_list(bool json) {
  const auto infos = torch_workload_infos();
  if (json) {
    auto list = nlohmann::json::array();
    for (const auto& info : infos) {
      list.push_back({{"name", info.name},
                      {"unit", info.item_unit},
                      {"default_batch", info.default_batch},
                      {"description", info.description}});
    }
    fmt::print("{}\n", list.dump(2));
    return;
  }
  fmt::print("{:<10} {:<7} {:>6}  {}\n", "name", "unit", "batch", "description");
  for (const auto& info : infos) {
    fmt::print("{:<10} {:<7} {:>6}  {}\n", info.name, info.item_unit, info.default_batch, info.description);
  }
}

constexpr int default_prompt_length = 128;
constexpr int default_generated_length = 128;

struct PhaseResult {
  std::int64_t tokens = 0;
  double seconds = 0;
  double tokens_per_s() const { return static_cast<double>(tokens) / seconds; }
};

// Runs `phase` `count` times inside the named marker window, one iteration marker
// per run once the device has finished it.
PhaseResult run_phase(const char* name, std::int64_t count, std::int64_t tokens_per_run,
                      const std::function<void()>& phase, TorchGenerator& generator, MarkerChannel& markers) {
  markers.write_line(fmt::format("dvfslab:begin {}", name));
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t done = 0; done < count; ++done) {
    phase();
    if (markers.active()) {
      generator.synchronize();
      markers.write_line(fmt::format("dvfslab:iter 1 items {}", tokens_per_run));
    }
  }
  generator.synchronize();
  PhaseResult result{count * tokens_per_run, seconds_since(start)};
  markers.write_line(fmt::format("dvfslab:end {}", name));
  return result;
}

// --mode generate: warm-up rounds of prefill and decode, then --iters prefills
// followed by --iters decodes, each phase one marker window.
void run_generation(const RunWorkloadArgs& args, const Case& workload_case) {
  MarkerChannel markers;
  const auto setup_start = std::chrono::steady_clock::now();
  const int prompt_length = args.prompt_length == 0 ? default_prompt_length : args.prompt_length;
  const int generated_length = args.generated_length == 0 ? default_generated_length : args.generated_length;
  auto generator =
      create_torch_generator(workload_case, args.options, args.preset, prompt_length, generated_length);
  for (std::int64_t round = 0; round < args.warmup; ++round) {
    generator->prefill();
    generator->decode();
  }
  generator->synchronize();
  const double setup_s = seconds_since(setup_start);
  const auto info = generator->run_info();
  for (const auto& notice : info.notices) fmt::print(stderr, "dvfslab: notice: {}\n", notice);

  const auto prefill = run_phase(
      "prefill", args.iterations, generator->prefill_tokens(), [&] { generator->prefill(); }, *generator,
      markers);
  const auto decode = run_phase(
      "decode", args.iterations, generator->decode_tokens(), [&] { generator->decode(); }, *generator,
      markers);

  const auto phase_json = [](const PhaseResult& phase) {
    return nlohmann::json{
        {"tokens", phase.tokens}, {"seconds", phase.seconds}, {"tokens_per_s", phase.tokens_per_s()}};
  };
  if (args.json) {
    nlohmann::json out = {{"workload", workload_case.workload},
                          {"preset", info.preset},
                          {"mode", "generate"},
                          {"precision", std::string(to_string(workload_case.precision))},
                          {"batch", workload_case.batch},
                          {"device", info.device},
                          {"prompt_length", prompt_length},
                          {"generated_length", generated_length},
                          {"warmup_iterations", args.warmup},
                          {"iterations", args.iterations},
                          {"setup_s", setup_s},
                          {"prefill", phase_json(prefill)},
                          {"decode", phase_json(decode)},
                          {"notices", info.notices}};
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{} {} generate, batch {}, on {}: {} rounds\n", workload_case.workload, info.preset,
             workload_case.batch, info.device, args.iterations);
  fmt::print("  prefill {:.1f} tokens/s ({} tokens in {:.3f} s)\n", prefill.tokens_per_s(), prefill.tokens,
             prefill.seconds);
  fmt::print("  decode  {:.1f} tokens/s ({} tokens in {:.3f} s)\n", decode.tokens_per_s(), decode.tokens,
             decode.seconds);
}

void run_workload(RunWorkloadArgs args) {
  if (args.list) {
    print_list(args.json);
    return;
  }
  if (args.name.empty()) {
    throw UsageError("run-workload needs a workload NAME (see `dvfslab run-workload --list`)");
  }
  if (args.iterations < 1) throw ConfigError("--iters must be at least 1");
  if (args.warmup < 0) throw ConfigError("--warmup must be 0 or more");
  if (args.mark_every < 1) throw ConfigError("--mark-every must be at least 1");
  if (args.profile_iterations < 1) throw ConfigError("--profile-iters must be at least 1");

  const bool generate = args.mode == "generate";
  if (!generate && (args.prompt_length != 0 || args.generated_length != 0)) {
    throw ConfigError("--prompt-len and --gen-len are for --mode generate");
  }
  Case workload_case;
  workload_case.workload = args.name;
  workload_case.mode = generate ? Mode::infer : parse_mode(args.mode);
  workload_case.precision = parse_precision(args.precision);
  workload_case.batch = args.batch;
  if (args.batch == 0) {
    for (const auto& info : torch_workload_infos()) {
      if (info.name == args.name) workload_case.batch = info.default_batch;
    }
  }
  args.options.channels_last = !args.no_channels_last;
  args.options.cuda_graph = !args.no_cuda_graph;
  args.options.cudnn_benchmark = !args.no_cudnn_benchmark;
  args.options.fused_layers = !args.no_fusion;
  if (generate) {
    if (args.kernel_profile) throw ConfigError("--kernel-profile is for --mode train and infer");
    run_generation(args, workload_case);
    return;
  }

  // Refuses a bad profile path before the run rather than after it.
  if (args.kernel_profile) OutputFile check(*args.kernel_profile);
  MarkerChannel markers;
  auto workload = create_torch_workload(workload_case, args.options, args.preset);
  const auto setup_start = std::chrono::steady_clock::now();
  workload->prepare();
  const double setup_s = seconds_since(setup_start);
  const auto info = workload->run_info();
  for (const auto& notice : info.notices) fmt::print(stderr, "dvfslab: notice: {}\n", notice);
  const bool on_cpu = info.device == "cpu";
  if (on_cpu && args.options.torch_device.empty()) {
    fmt::print(
        stderr,
        "dvfslab: notice: running on the CPU, far slower than a GPU: this LibTorch has no CUDA or sees "
        "no GPU (Debian's libtorch-dev is CPU-only; docs/workloads.md)\n");
  }
  CpuProgress cpu_progress;
  CpuProgress* progress = on_cpu ? &cpu_progress : nullptr;

  if (progress != nullptr) progress->start("warm-up", args.warmup);
  run_marked(*workload, args.warmup, args.mark_every, markers, progress);
  markers.write_line("dvfslab:begin measured");
  if (progress != nullptr) progress->start("measured", args.iterations);
  const auto start = std::chrono::steady_clock::now();
  run_marked(*workload, args.iterations, args.mark_every, markers, progress);
  const double seconds = seconds_since(start);
  markers.write_line("dvfslab:end measured");

  const double per_iteration_s = seconds / static_cast<double>(args.iterations);
  const double items_per_s = workload->items_per_iteration() / per_iteration_s;
  std::optional<double> loss;
  if (workload_case.mode == Mode::train) loss = workload->last_loss();

  if (args.json) {
    auto out = run_description(workload_case, info);
    out.update(nlohmann::json{{"channels_last", args.options.channels_last},
                              {"image_size", info.image_size},
                              {"sequence_length", info.sequence_length},
                              {"warmup_iterations", args.warmup},
                              {"iterations", args.iterations},
                              {"seconds", seconds},
                              {"setup_s", setup_s},
                              {"time_per_iteration_s", per_iteration_s},
                              {"item_unit", workload->item_unit()},
                              {"items_per_iteration", workload->items_per_iteration()},
                              {"items_per_s", items_per_s},
                              {"notices", info.notices}});
    if (!info.preset.empty()) out["preset"] = info.preset;
    out["loss"] = loss ? nlohmann::json(*loss) : nlohmann::json(nullptr);
    if (args.kernel_profile) {
      write_kernel_profile(*workload, args, workload_case);
      out["kernel_profile"] = *args.kernel_profile;
    }
    fmt::print("{}\n", out.dump(2));
    return;
  }
  std::vector<std::string> how;
  if (info.cuda_graph) how.push_back("CUDA graph");
  if (info.fused_layers > 0) {
    const bool images = workload->item_unit() == "images";
    how.push_back(
        fmt::format("{} fused {}", info.fused_layers, images ? "convolution units" : "decoder blocks"));
  }
  if (info.own_kernel_pools > 0)
    how.push_back(fmt::format("{} max pools by own kernels", info.own_kernel_pools));
  fmt::print("{} on {}{}: {} iterations in {:.3f} s\n", to_string(workload_case), info.device,
             how.empty() ? "" : fmt::format(" ({})", fmt::join(how, ", ")), args.iterations, seconds);
  fmt::print("  {:.3f} ms per iteration, {:.1f} {}/s", per_iteration_s * 1e3, items_per_s,
             workload->item_unit());
  if (loss) fmt::print(", final loss {:.4f}", *loss);
  fmt::print("\n");
  if (args.kernel_profile) write_kernel_profile(*workload, args, workload_case);
}

}  // namespace
}  // namespace dvfslab::cli

extern "C" __attribute__((visibility("default"))) const char* dvfslab_module_build() {
  return DVFSLAB_MODULE_BUILD;
}

extern "C" __attribute__((visibility("default"))) void dvfslab_run_workload(
    const dvfslab::cli::RunWorkloadArgs& args) {
  dvfslab::explain_torch_errors([&] { dvfslab::cli::run_workload(args); });
}

extern "C" __attribute__((visibility("default"))) void dvfslab_add_torch_workloads(
    dvfslab::WorkloadRegistry& registry) {
  dvfslab::add_torch_workloads(registry);
}
