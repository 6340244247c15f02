#pragma once
// Jobs `dvfslab tune` drives (docs/tune.md): an external program that reports its
// iterations with the marker protocol, or a simulated job of built-in simulated
// workloads whose iterations follow the simulated GPU's current setting on the
// virtual clock. And where a tuned job's report is kept.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "dvfslab/command.hpp"
#include "dvfslab/tuner.hpp"
#include "dvfslab/types.hpp"

namespace dvfslab {

class Store;

// One phase of a simulated job: a simulated workload for a number of iterations.
struct SimJobPhase {
  Case workload_case;
  std::int64_t iterations = 0;
};

// Reads "PHASE[,PHASE...]", PHASE = WORKLOAD[/train|/infer][/bBATCH][/PRECISION][:ITERATIONS]
// (train, batch 64, fp32 and 1000 iterations unless given), e.g.
// "resnet50/train/b64:3000,bert_base/infer/b32:3000"; ConfigError naming the fault.
std::vector<SimJobPhase> parse_sim_job(std::string_view text);

// Runs the phases on `gpu` (a simulated GPU on its virtual clock) one iteration at a
// time under `tuner` (step_begin, run, step_end with the iteration's items).
// ConfigError for another GPU or an unknown workload.
void run_sim_job(Gpu& gpu, Tuner& tuner, const std::vector<SimJobPhase>& phases);

struct TunedCommand {
  std::vector<std::string> command;
  ChildExit exit;
  int interrupted_by = 0;  // a signal sent to us and passed on to the program; 0 when none
  TuneReport report;
  std::size_t marker_lines = 0;
  std::size_t malformed_markers = 0;
  // Valid lines refused: a count past the job's totals (never wrapped), a step going back.
  std::size_t rejected_markers = 0;
};

// Runs `argv` under a Tuner on `gpu`: its iteration markers drive the tuner; a
// SIGINT / SIGTERM / SIGHUP sent to this process is passed on to the program and
// restores the GPU at once (no more changes). Refuses a read-only GPU before the
// program starts; throws CommandStartError when it cannot start.
TunedCommand tune_command(Gpu& gpu, const std::vector<std::string>& argv, const TunerOptions& options,
                          const ChildOptions& child_options = {});
// The same for a job on several GPUs of the node: every GPU at one setting, the
// job's total energy, every GPU restored (Tuner's constructor for several GPUs).
TunedCommand tune_command(std::vector<Gpu*> gpus, const std::vector<std::string>& argv,
                          const TunerOptions& options, const ChildOptions& child_options = {});

// Where `dvfslab tune` keeps its runs unless --db says otherwise: a file of its own,
// apart from the sweeps' and searches' dvfslab.sqlite, whose cases it must not join.
inline constexpr const char* default_tune_database_file = "dvfslab-tune.sqlite";

// The workload name of phase `phase` of a tuned job in the database: "tune:<job> phase <N>".
std::string tune_phase_workload(const std::string& job, int phase);

// Stores the probes of `report` as a run in `store`: one measurement per probe
// window, each phase a case of its own (tune_phase_workload), a setting's windows
// in a phase its repetitions; the whole report as the run's plan text. Returns the
// run's id.
std::int64_t store_tune_report(Store& store, const GpuIdentity& gpu, const std::string& job,
                               const TuneReport& report);

}  // namespace dvfslab
