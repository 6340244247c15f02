// Shard databases of one plan into one database.
#include <fmt/format.h>
#include <unistd.h>

#include <map>
#include <tuple>

#include "dvfslab/error.hpp"
#include "dvfslab/store_tools.hpp"
#include "store/sqlite.hpp"
#include "store/tables.hpp"

namespace dvfslab {
namespace {

struct Input {
  std::filesystem::path path;
  std::vector<RunInfo> runs;
  std::vector<StoredMeasurement> measurements;
  std::map<std::int64_t, std::vector<Telemetry>> samples;  // by measurement id
};

Input load(const std::filesystem::path& path) {
  Store store = Store::open_existing(path);
  Input input{path, store.runs(), store.measurements(), {}};
  for (const StoredMeasurement& stored : input.measurements) {
    auto trace = store.samples(stored.id);
    if (!trace.empty()) input.samples.emplace(stored.id, std::move(trace));
  }
  return input;
}

void refuse_different_plans(const std::vector<Input>& inputs) {
  const RunInfo* first = nullptr;
  const std::filesystem::path* first_path = nullptr;
  for (const Input& input : inputs) {
    for (const RunInfo& run : input.runs) {
      if (!first) {
        first = &run;
        first_path = &input.path;
      } else if (run.plan_hash != first->plan_hash) {
        throw StoreError(
            fmt::format("{} (plan {}) and {} (plan {}) hold different plans: merge only the shards of "
                        "one plan",
                        first_path->string(), first->plan_hash, input.path.string(), run.plan_hash));
      }
    }
  }
}

void refuse_duplicate_points(const std::vector<Input>& inputs) {
  using Key = std::tuple<std::string, Point>;  // GPU model, point
  std::map<Key, const std::filesystem::path*> owner;
  for (const Input& input : inputs) {
    std::map<std::int64_t, std::string> gpu_of;
    for (const RunInfo& run : input.runs) gpu_of.emplace(run.id, run.gpu.name);
    for (const StoredMeasurement& stored : input.measurements) {
      if (stored.point.role != RecordRole::grid) continue;
      const auto [slot, is_new] =
          owner.try_emplace(Key{gpu_of.at(stored.run_id), stored.point.point}, &input.path);
      if (!is_new) {
        const Point& p = stored.point.point;
        throw StoreError(
            fmt::format("{} {} repetition {} is in both {} and {}: each point must come from one "
                        "shard (was a shard merged twice, or run twice?)",
                        to_string(p.workload_case), to_string(p.setting), p.repetition,
                        slot->second->string(), input.path.string()));
      }
    }
  }
}

void write(const std::filesystem::path& output, const std::vector<Input>& inputs) {
  Store store(output);
  store_detail::Connection& connection = store.connection();
  store_detail::Transaction transaction(connection);
  for (const Input& input : inputs) {
    std::map<std::int64_t, std::int64_t> new_id;  // input run id -> output run id
    for (const RunInfo& run : input.runs) new_id.emplace(run.id, store_detail::insert_run(connection, run));
    for (const StoredMeasurement& stored : input.measurements) {
      const auto trace = input.samples.find(stored.id);
      store_detail::insert_measurement(
          connection, new_id.at(stored.run_id), stored.recorded_at, stored.point, stored.measurement,
          trace == input.samples.end() ? std::span<const Telemetry>()
                                       : std::span<const Telemetry>(trace->second));
    }
  }
  transaction.commit();
}

}  // namespace

void merge_stores(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs) {
  if (inputs.empty()) throw StoreError("nothing to merge: name the shard databases after the output");
  refuse_special_database_name(output);
  if (std::filesystem::exists(output)) {
    throw StoreError(
        fmt::format("{} already exists: merge writes a new database, so choose another name or "
                    "remove it",
                    output.string()));
  }
  std::vector<Input> loaded;
  for (const auto& path : inputs) loaded.push_back(load(path));
  refuse_different_plans(loaded);
  refuse_duplicate_points(loaded);
  // Built under a temporary name and renamed when complete, so that OUT never
  // exists half-made; a failure leaves nothing behind (side files included).
  const std::filesystem::path temp =
      output.parent_path() / fmt::format(".{}.tmp-{}", output.filename().string(), ::getpid());
  try {
    write(temp, loaded);
    std::filesystem::rename(temp, output);
  } catch (...) {
    for (const auto& file : database_files(temp)) std::filesystem::remove(file);
    throw;
  }
}

}  // namespace dvfslab
