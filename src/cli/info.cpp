// dvfslab info: what the GPUs are, which clocks and power limits they support, and
// a live reading. Text for people, --json for programs (docs/info.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "cli/info_control.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_json.hpp"
#include "dvfslab/gpu_summary.hpp"

namespace dvfslab::cli {
namespace {

struct InfoOptions {
  std::string device = "auto";
  bool json = false;
};

void run_info(const InfoOptions& options) {
  auto gpus = open_gpus(options.device, open_options());
  // Only GPUs whose settings outlive the process are changed by a driver or a daemon.
  const bool controllable =
      std::any_of(gpus.begin(), gpus.end(), [](const auto& gpu) { return gpu->persists_settings(); });
  const nlohmann::json control = controllable ? describe_control() : nlohmann::json();
  if (options.json) {
    nlohmann::json devices = nlohmann::json::array();
    for (auto& gpu : gpus) devices.push_back(describe_gpu(*gpu));
    nlohmann::json document{{"devices", devices}};
    if (controllable) document["control"] = control;
    fmt::print("{}\n", document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    fmt::print("{}{}", i == 0 ? "" : "\n", describe_gpu_text(*gpus[i]));
  }
  if (controllable) fmt::print("\n{}", describe_control_text(control));
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* info = app.add_subcommand(
      "info",
      "Show each GPU's identity, supported clocks, power limits and a live reading (read-only: "
      "never changes a setting).");
  add_device_option(*info, options->device, ". With auto, info shows every GPU found")->capture_default_str();
  info->add_flag("--json", options->json,
                 "Print one JSON document {\"devices\":[...]} on stdout instead of the summary "
                 "(fields in docs/info.md)");
  info->callback([options] { run_info(*options); });
}

}  // namespace dvfslab::cli
