#pragma once
// The whole public API of dvfslab for a program built on the installed library
// (find_package(dvfslab), target dvfslab::core):
//
//   #include "dvfslab/dvfslab.hpp"
//
// The headers below are the installed ones, grouped by the layer that owns them
// (docs/architecture.md#layers); the build checks that every public header is
// listed and no internal one. The LibTorch workloads (torch_workloads.hpp) are not
// part of the package.

// common: the vocabulary every layer shares
#include "dvfslab/clock.hpp"
#include "dvfslab/clock_check.hpp"
#include "dvfslab/control_characters.hpp"
#include "dvfslab/error.hpp"
#include "dvfslab/results.hpp"
#include "dvfslab/sweep_table.hpp"
#include "dvfslab/types.hpp"
#include "dvfslab/workload_profile_names.hpp"
#include "dvfslab/writer_registry.hpp"
// model
#include "dvfslab/model.hpp"
// gpu
#include "dvfslab/gpu.hpp"
#include "dvfslab/gpu_backends.hpp"
#include "dvfslab/gpu_json.hpp"
#include "dvfslab/replay.hpp"
#include "dvfslab/sim_gpu.hpp"
#include "dvfslab/twin.hpp"
#include "dvfslab/workload_power_profiles.hpp"
// meter
#include "dvfslab/markers.hpp"
#include "dvfslab/meter.hpp"
// guard
#include "dvfslab/guard.hpp"
// workload
#include "dvfslab/command.hpp"
#include "dvfslab/sim_workloads.hpp"
#include "dvfslab/workload.hpp"
// store
#include "dvfslab/store.hpp"
#include "dvfslab/store_tools.hpp"
// analysis
#include "dvfslab/analysis.hpp"
// sweep
#include "dvfslab/clock_map.hpp"
#include "dvfslab/default_workloads.hpp"
#include "dvfslab/job_stage.hpp"
#include "dvfslab/plan.hpp"
#include "dvfslab/search.hpp"
#include "dvfslab/strategy.hpp"
#include "dvfslab/sweep.hpp"
// tune
#include "dvfslab/tune_job.hpp"
#include "dvfslab/tuner.hpp"
// report, study, slurm: the faces of the commands built on the library
#include "dvfslab/report.hpp"
#include "dvfslab/optimum_table.hpp"
#include "dvfslab/slurm.hpp"
#include "dvfslab/study.hpp"
