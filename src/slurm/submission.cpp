// DIR/jobs.json: the job ids of a submission and of its resubmissions.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "dvfslab/slurm.hpp"

namespace dvfslab::slurm {

const ArraySubmission& Submission::array_of(int shard) const {
  for (auto array = arrays.rbegin(); array != arrays.rend(); ++array) {
    if (std::find(array->shards.begin(), array->shards.end(), shard) != array->shards.end()) return *array;
  }
  throw SlurmError(
      fmt::format("{} names no array job for shard {}: was it edited by hand?", jobs_file_name, shard));
}

nlohmann::json to_json(const Submission& submission) {
  nlohmann::json arrays = nlohmann::json::array();
  for (const auto& array : submission.arrays)
    arrays.push_back({{"job_id", array.job_id}, {"shards", array.shards}});
  nlohmann::json record = {{"format", 1},
                           {"command", submission.command},
                           {"shards", submission.shards},
                           {"arrays", arrays},
                           {"merges", submission.merges}};
  record["sbatch_args"] = submission.sbatch_args;
  return record;
}

Submission submission_from_json(const nlohmann::json& json) {
  try {
    Submission submission;
    if (json.at("format").get<int>() != 1) throw SlurmError("unknown format");
    submission.command = json.at("command").get<std::string>();
    submission.shards = json.at("shards").get<int>();
    for (const auto& array : json.at("arrays")) {
      submission.arrays.push_back(
          {array.at("job_id").get<std::string>(), array.at("shards").get<std::vector<int>>()});
    }
    submission.merges = json.at("merges").get<std::vector<std::string>>();
    // Records written before --sbatch-arg existed have none.
    if (json.contains("sbatch_args"))
      submission.sbatch_args = json.at("sbatch_args").get<std::vector<std::string>>();
    if (submission.shards < 1 || submission.arrays.empty()) throw SlurmError("no array job");
    return submission;
  } catch (const std::exception& e) {
    throw SlurmError(
        fmt::format("{} is not a submission record of `dvfslab slurm submit` ({}): submit again into a "
                    "new directory",
                    jobs_file_name, e.what()));
  }
}

}  // namespace dvfslab::slurm
