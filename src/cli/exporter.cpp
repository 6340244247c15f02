// `dvfslab exporter`: serves every GPU's energy counter, power, clocks, power
// limit, temperature, throttle reasons and dvfslab's changes as Prometheus
// metrics over HTTP until SIGINT / SIGTERM (docs/fleet.md).
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/environment.hpp"
#include "cli/number_checks.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/exporter.hpp"
#include "dvfslab/gpu.hpp"
#include "dvfslab/guard.hpp"

namespace dvfslab::cli {
namespace {

struct ExporterOptions {
  std::string listen = "127.0.0.1:9402";
  std::string device = "all";
  double interval_s = 1.0;
  std::string state_dir;
};

// Set by the signal thread's action; the main thread waits for it and then stops
// the server and the sampler in order, so that no scrape is cut half-way.
struct StopRequest {
  std::mutex mutex;
  std::condition_variable arrived;
  std::optional<int> signal_number;
  bool server_stopped = false;  // the HTTP server stopped accepting connections on its own
};

const char* signal_name(int signal_number) {
  return signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "SIGHUP";
}

void run_exporter(const ExporterOptions& options) {
  const ListenAddress address = parse_listen_address(options.listen);
  // The exporter only watches: its GPUs refuse every control call.
  OpenOptions open = open_options(SimTimeMode::wall_time);
  open.read_only = true;
  std::vector<std::unique_ptr<Gpu>> gpus = open_gpus(options.device, open);
  const bool simulated = !gpus.empty() && gpus.front()->identity().simulated;

  StopRequest stop;
  InterruptScope scope;  // signals run the action below and return here, instead of exiting
  const InterruptAction on_signal([&stop](int signal_number) {
    std::lock_guard hold(stop.mutex);
    stop.signal_number = signal_number;
    stop.arrived.notify_all();
  });

  GpuSampler sampler(std::move(gpus),
                     SamplerOptions{std::chrono::milliseconds(static_cast<long>(options.interval_s * 1000.0)),
                                    state_dir(options.state_dir)});
  std::optional<MetricsServer> server;
  server.emplace(address, sampler, [&stop] {
    std::lock_guard hold(stop.mutex);
    stop.server_stopped = true;
    stop.arrived.notify_all();
  });
  fmt::print("dvfslab exporter: serving {} GPU{}{} on http://{}:{}/metrics, read every {:g} s\n",
             sampler.gpu_count(), sampler.gpu_count() == 1 ? "" : "s", simulated ? " (SIMULATED)" : "",
             address.host, server->port(), options.interval_s);
  std::fflush(stdout);

  std::unique_lock hold(stop.mutex);
  stop.arrived.wait(hold, [&stop] { return stop.signal_number.has_value() || stop.server_stopped; });
  const int port = server->port();
  server.reset();
  sampler.stop();
  if (!stop.signal_number) {
    throw Error(fmt::format(
        "the HTTP server on {}:{} stopped accepting connections; exiting so that a supervisor restarts it",
        address.host, port));
  }
  fmt::print("dvfslab exporter: stopped on {}\n", signal_name(*stop.signal_number));
}

}  // namespace

void add_exporter_command(CLI::App& app) {
  auto options = std::make_shared<ExporterOptions>();
  CLI::App* command = app.add_subcommand(
      "exporter",
      "Serve the GPUs' energy counter, power, clocks, power limit, temperature, throttle reasons and the "
      "settings dvfslab changed (with its process and user), and the energy of each Slurm job alone on a "
      "GPU, "
      "as Prometheus metrics on "
      "http://HOST:PORT/metrics, "
      "until Ctrl-C or SIGTERM (then exit 0). A background thread reads the GPUs every --interval; scrapes "
      "are answered from its latest readings and never wait for the driver. Read-only: it changes nothing. "
      "Metrics, scrape config and Grafana dashboard: docs/fleet.md.");
  command
      ->add_option(
          "--listen", options->listen,
          "HOST:PORT to serve on: an IPv4 address or localhost, and a port (0: any free port, printed "
          "at start). Loopback by default; 0.0.0.0 serves every interface, without authentication")
      ->capture_default_str();
  add_device_option(*command, options->device, ". The exporter serves every GPU the spec names")
      ->capture_default_str();
  command->add_option("--interval", options->interval_s, "seconds between two readings of the GPUs")
      ->capture_default_str()
      ->check(number_from(0.05, 3600.0));
  command->add_option(
      "--state-dir", options->state_dir,
      "directory of the restore journals that say which settings dvfslab changed (default: see "
      "`dvfslab restore --help`)");
  command->callback([options] { run_exporter(*options); });
}

}  // namespace dvfslab::cli
