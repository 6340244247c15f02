// The sbatch scripts of a sharded sweep and its merge, and Slurm's array syntax.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include "dvfslab/control_characters.hpp"
#include "dvfslab/slurm.hpp"

namespace dvfslab::slurm {
namespace {

std::string in_dir(const SubmitSpec& spec, std::string_view name) {
  return shell_quote((spec.dir / name).string());
}

// Characters that mean nothing special to a shell nor to sbatch's reading of an
// #SBATCH line, so a word of only these needs no quotes.
bool is_plain_word(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("/._-+:=,@%").find(c) != std::string_view::npos;
  });
}

// "#SBATCH --option=value" as sbatch reads it: it splits the line at whitespace,
// ends it at an unquoted '#', and takes quotes and backslashes as a shell does
// (docs/slurm.md). The spec was checked, so no value holds a line break.
std::string directive(std::string_view option, std::string_view value) {
  if (is_plain_word(value)) return fmt::format("#SBATCH --{}={}\n", option, value);
  std::string quoted = "\"";
  for (const char c : value) {
    if (c == '\\' || c == '"') quoted += '\\';
    quoted += c;
  }
  return fmt::format("#SBATCH --{}={}\"\n", option, quoted);
}

// --output of a job that logs to `file` in the spec's directory: Slurm expands
// '%' patterns in it (%a: the array task), so a '%' of the directory is written %%.
std::string output_directive(const SubmitSpec& spec, std::string_view file) {
  std::string pattern;
  for (const char c : spec.dir.string()) pattern += c == '%' ? std::string("%%") : std::string(1, c);
  return directive("output", (std::filesystem::path(pattern) / file).string());
}

// The #SBATCH lines both scripts share; the GPU request only the shards need.
std::string common_directives(const SubmitSpec& spec) {
  std::string lines;
  if (!spec.partition.empty()) lines += directive("partition", spec.partition);
  if (!spec.account.empty()) lines += directive("account", spec.account);
  if (!spec.time_limit.empty()) lines += directive("time", spec.time_limit);
  return lines;
}

int to_int(std::string_view text, std::string_view whole) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw SlurmError(fmt::format("'{}' is not a Slurm array task list (like 1-3,5)", whole));
  }
  return value;
}

}  // namespace

std::string shard_database_name(int shard) { return fmt::format("shard-{}.sqlite", shard); }
std::string shard_log_name(int shard) { return fmt::format("shard-{}.log", shard); }
std::string shard_exit_name(int shard) { return fmt::format("shard-{}.exit", shard); }

std::string shell_quote(std::string_view word) {
  if (is_plain_word(word)) return std::string(word);
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

void check_submit_spec(const SubmitSpec& spec) {
  const std::string dir = spec.dir.string();
  const std::pair<std::string_view, std::string_view> values[] = {{"--command", spec.command},
                                                                  {"--strategy", spec.strategy},
                                                                  {"--partition", spec.partition},
                                                                  {"--gres", spec.gres},
                                                                  {"--time", spec.time_limit},
                                                                  {"--account", spec.account},
                                                                  {"--constraint", spec.constraint},
                                                                  {"--device", spec.device},
                                                                  {"--dvfslab", spec.dvfslab_binary.native()},
                                                                  {"--out", dir}};
  for (const auto& [option, value] : values) {
    if (has_control_character(value)) {
      throw UsageError(
          fmt::format("{} '{}' holds a control character (a line break?): it would end its line of the job "
                      "script and run the rest as a command; give the value on one line",
                      option, escape_control_characters(value)));
    }
  }
  if (dir.find('\\') != std::string::npos) {
    throw UsageError(
        fmt::format("--out {}: a backslash in the directory turns off Slurm's file name patterns, which "
                    "name the shards' logs (shard-%a.log); choose a directory without one",
                    dir));
  }
}

std::string array_script(const SubmitSpec& spec) {
  check_submit_spec(spec);
  std::string script = "#!/bin/bash\n";
  script += directive("job-name", "dvfslab-" + spec.command);
  script += fmt::format("#SBATCH --array=1-{}\n", spec.shards);
  script += output_directive(spec, "shard-%a.log");
  script += common_directives(spec);
  if (!spec.gres.empty()) script += directive("gres", spec.gres);
  if (!spec.constraint.empty()) script += directive("constraint", spec.constraint);
  script += fmt::format(
      "# Written by `dvfslab slurm submit`: task i of the array runs shard i/{0} of the plan.\n"
      "# `dvfslab slurm resubmit` runs it again for the failed tasks (sbatch --array=LIST).\n"
      "shard=${{SLURM_ARRAY_TASK_ID:?submit this script with sbatch --array}}\n"
      "rm -f {1}/shard-\"$shard\".exit\n",
      spec.shards, shell_quote(spec.dir.string()));
  // `dvfslab search` takes one case; a shard of a plan holds several, so a search
  // shard is the sweep runner with the strategy.
  const std::string subcommand = spec.command == "search" ? "sweep" : spec.command;
  std::string command =
      fmt::format("{} {} {} --shard \"$shard/{}\" --db {}/shard-\"$shard\".sqlite --resume",
                  shell_quote(spec.dvfslab_binary.string()), subcommand, in_dir(spec, plan_file_name),
                  spec.shards, shell_quote(spec.dir.string()));
  if (!spec.strategy.empty()) command += " --strategy " + shell_quote(spec.strategy);
  if (!spec.objective.empty()) command += " --objective " + shell_quote(spec.objective);
  if (!spec.device.empty()) command += " --device " + shell_quote(spec.device);
  if (spec.allow_clock_changes) command += " --allow-clock-changes";
  script += command + "\n";
  script += fmt::format(
      "status=$?\n"
      "echo \"$status\" > {}/shard-\"$shard\".exit\n"
      "exit \"$status\"\n",
      shell_quote(spec.dir.string()));
  return script;
}

std::string merge_script(const SubmitSpec& spec) {
  check_submit_spec(spec);
  std::string script = "#!/bin/bash\n#SBATCH --job-name=dvfslab-merge\n";
  script += output_directive(spec, merge_log_name);
  script += common_directives(spec);
  script += fmt::format(
      "# Written by `dvfslab slurm submit`: runs after every shard succeeded (afterok).\n"
      "rm -f {}\n",
      in_dir(spec, merge_exit_name));
  std::string command = fmt::format("{} merge {}", shell_quote(spec.dvfslab_binary.string()),
                                    in_dir(spec, merged_database_name));
  for (int shard = 1; shard <= spec.shards; ++shard)
    command += fmt::format(" {}", in_dir(spec, shard_database_name(shard)));
  script += command + "\n";
  script +=
      fmt::format("status=$?\necho \"$status\" > {}\nexit \"$status\"\n", in_dir(spec, merge_exit_name));
  return script;
}

std::string format_task_list(std::vector<int> tasks) {
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  std::string list;
  for (std::size_t i = 0; i < tasks.size();) {
    std::size_t last = i;
    while (last + 1 < tasks.size() && tasks[last + 1] == tasks[last] + 1) ++last;
    if (!list.empty()) list += ',';
    list += last == i ? std::to_string(tasks[i]) : fmt::format("{}-{}", tasks[i], tasks[last]);
    i = last + 1;
  }
  return list;
}

std::vector<int> parse_task_list(std::string_view text) {
  std::vector<int> tasks;
  std::string_view list = text.substr(0, text.find('%'));  // "%2": at most 2 at once
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    int step = 1;
    if (const auto colon = item.find(':'); colon != std::string_view::npos) {
      step = to_int(item.substr(colon + 1), text);
      item = item.substr(0, colon);
    }
    const auto dash = item.find('-');
    const int first = to_int(item.substr(0, dash), text);
    const int last = dash == std::string_view::npos ? first : to_int(item.substr(dash + 1), text);
    if (step < 1 || last < first) throw SlurmError(fmt::format("'{}' is not a Slurm array task list", text));
    for (int task = first; task <= last; task += step) tasks.push_back(task);
  }
  if (tasks.empty()) throw SlurmError(fmt::format("'{}' is not a Slurm array task list", text));
  return tasks;
}

}  // namespace dvfslab::slurm
