// Hostile plans (issue 11 items 5, 6, 9, 10 and 18) and option values: each plan is
// dry-run on a simulated GPU, and those that must be refused before any control call
// are also run for real on the fake NVML with clock changes allowed, so a value that
// slipped through validation would show as a changed GPU or a hang.
#include <sys/stat.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hostile_cases.hpp"

namespace dvfslab::testing {
namespace {

namespace fs = std::filesystem;

const std::string plan_head = "[plan]\nname = \"hostile\"\n";
const std::string plan_case = "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [32]\n";

// A plan with `measure` lines in [measure] and `knobs` lines in [knobs]; the knob
// default changes the SM clock, so an accepted plan would touch a real GPU.
std::string plan_with(const std::string& knobs, const std::string& measure) {
  const bool has_duration = measure.find("duration_s") != std::string::npos;
  const bool has_settle = measure.find("settle_s") != std::string::npos;
  return plan_head + "[knobs]\n" + (knobs.empty() ? "sm_mhz = [1380]\n" : knobs + "\n") + plan_case +
         "[measure]\n" + (has_duration ? "" : "duration_s = 0.2\n") + (has_settle ? "" : "settle_s = 0\n") +
         measure + "\n";
}

std::string repeated(const std::string& part, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += part;
  return out;
}

// "1, 2, ..." (or "\"w1\", ..." with a prefix), 100 to a line: plan lines are
// bounded, arrays may span lines.
std::string comma_list(int count, const std::string& prefix) {
  std::string out;
  for (int i = 1; i <= count; ++i) {
    out += (i == 1         ? ""
            : i % 100 == 0 ? ",\n"
                           : ", ") +
           prefix + std::to_string(i) + (prefix.empty() ? "" : "\"");
  }
  return out;
}

struct PlanText {
  std::string name;
  std::string text;
  bool refused_before_any_change = true;
  // Also run for real on the fake NVML with clock changes allowed: the values that
  // would change the GPU or hang a real run if they slipped through.
  bool also_on_nvml = false;
};

std::vector<PlanText> nesting_plans() {
  std::string inline_tables = "1";
  for (int i = 0; i < 10'000; ++i) inline_tables = "{a=" + inline_tables + "}";
  return {
      {"nested_arrays_10000", plan_head + "[knobs]\nsm_mhz = " + std::string(10'000, '[') + "1380" +
                                  std::string(10'000, ']') + "\n" + plan_case},
      {"nested_inline_tables_10000", plan_head + "x = " + inline_tables + "\n" + plan_case},
      {"nested_mixed_5000",
       plan_head + "x = " + repeated("[{a=", 5'000) + "1" + repeated("}]", 5'000) + "\n" + plan_case},
      {"unclosed_arrays_100000", plan_head + "x = " + std::string(100'000, '[') + "\n"},
      {"nested_33_levels", plan_head + "[knobs]\nsm_mhz = " + std::string(33, '[') + "1380" +
                               std::string(33, ']') + "\n" + plan_case},
      {"dotted_key_10000_deep", plan_head + repeated("a.", 10'000) + "a = 1\n" + plan_case},
      {"dotted_table_header_5000_deep", plan_case + "[" + repeated("a.", 5'000) + "a]\nx = 1\n"},
      {"brackets_in_strings", plan_head + "description = \"" + std::string(50'000, '[') + "\"\n" + plan_case,
       false},
  };
}

std::vector<PlanText> number_plans() {
  std::vector<PlanText> plans;
  for (const std::string key : {"duration_s", "settle_s", "cooldown_s", "warmup_s"}) {
    for (const std::string value : {"inf", "nan", "-inf", "1e308"}) {
      const std::string suffix = value == "-inf" ? "minus_inf" : value;
      plans.push_back({key + "_" + suffix, plan_with("", key + " = " + value)});
    }
  }
  plans.push_back({"ci_target_pct_nan", plan_with("", "ci_target_pct = nan")});
  plans.push_back({"ci_target_pct_inf", plan_with("", "ci_target_pct = inf")});
  plans.push_back({"warmup_iterations_int64_max", plan_with("", "warmup_iterations = 9223372036854775807")});
  plans.push_back({"warmup_iterations_negative", plan_with("", "warmup_iterations = -1")});
  plans.push_back({"repetitions_2_pow_31", plan_with("", "repetitions = 2147483648")});
  plans.push_back({"repetitions_int64_min", plan_with("", "repetitions = -9223372036854775808")});
  plans.push_back({"max_repetitions_2_pow_32", plan_with("", "max_repetitions = 4294967297")});
  plans.push_back({"drift_every_2_pow_32_plus_1", plan_with("", "drift_every = 4294967297")});
  plans.push_back({"seed_negative", plan_with("", "seed = -1")});
  plans.push_back({"integer_literal_beyond_int64", plan_with("", "seed = 99999999999999999999")});
  plans.push_back({"sm_mhz_wraps_to_1380", plan_with("sm_mhz = [4294968676]", "")});
  plans.push_back({"sm_mhz_int64_max", plan_with("sm_mhz = [9223372036854775807]", "")});
  plans.push_back({"sm_mhz_negative", plan_with("sm_mhz = [-1380]", "")});
  plans.push_back({"mem_mhz_wraps", plan_with("mem_mhz = [4294968173]", "")});
  plans.push_back({"power_limit_wraps_to_200", plan_with("power_limit_w = [4294967496]", "")});
  plans.push_back({"batch_wraps_to_1",
                   plan_head + "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [4294967297]\n"});
  plans.push_back(
      {"batch_2_pow_31", plan_head + "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [2147483648]\n"});
  plans.push_back({"batch_zero", plan_head + "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [0]\n"});
  // A profile id where a name belongs, a mask's worth of ids, and a name beyond the 255-bit mask.
  plans.push_back({"workload_profile_as_number", plan_with("workload_profile = [1]", ""), true, true});
  plans.push_back({"workload_profile_id_beyond_mask", plan_with("workload_profile = [\"profile-4294967297\"]", ""),
                   true, true});
  plans.push_back({"workload_profile_control_character", plan_with("workload_profile = [\"max-q\\n\"]", ""),
                   true, true});
  return plans;
}

std::vector<PlanText> range_and_grid_plans() {
  std::string many_cases;
  for (int i = 0; i < 100; ++i) {
    many_cases += "[[cases]]\nworkloads = [" + comma_list(40, "\"w") + "]\nbatch_sizes = [" +
                  comma_list(30, "") + "]\n";
  }
  return {
      {"sm_range_to_int_max", plan_with("sm_mhz = \"1:2147483647:1\"", "")},
      {"power_range_to_int_max", plan_with("power_limit_w = \"100:2147483647:1\"", "")},
      {"power_range_beyond_gpu", plan_with("power_limit_w = \"100:100000:1\"", "")},
      {"sm_range_beyond_int64", plan_with("sm_mhz = \"1:99999999999999999999:1\"", "")},
      {"sm_range_outside_table", plan_with("sm_mhz = \"50000:60000:1\"", "")},
      {"sm_range_backwards", plan_with("sm_mhz = \"1380:510:1\"", "")},
      {"sm_range_zero_step", plan_with("sm_mhz = \"510:1380:0\"", "")},
      {"sm_range_four_parts", plan_with("sm_mhz = \"1:2:3:4\"", "")},
      {"sm_count_2_pow_31", plan_with("sm_mhz = { count = 2147483648 }", "")},
      {"sm_every_zero", plan_with("sm_mhz = { every = 0 }", "")},
      {"sm_min_above_table", plan_with("sm_mhz = { min = 99999 }", "")},
      {"grid_1000_workloads_x_1000_batches", plan_head + "[[cases]]\nworkloads = [" +
                                                 comma_list(1'000, "\"w") + "]\nbatch_sizes = [" +
                                                 comma_list(1'000, "") + "]\n"},
      {"grid_100_case_tables_x_40_workloads_x_30_batches", plan_head + many_cases},
      {"grid_all_clocks_x_2000_batches",
       plan_head + "[knobs]\nsm_mhz = \"all\"\n[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [" +
           comma_list(2'000, "") + "]\n"},
  };
}

std::vector<PlanText> type_plans() {
  return {
      {"sm_mhz_bool", plan_with("sm_mhz = true", "")},
      {"sm_mhz_float", plan_with("sm_mhz = 1380.5", "")},
      {"sm_mhz_float_range", plan_with("sm_mhz = \"1.5:2:1\"", "")},
      {"sm_mhz_empty_table_means_all", plan_with("sm_mhz = {}", ""), false},
      {"sm_mhz_every_string", plan_with("sm_mhz = { every = \"x\" }", "")},
      {"sm_mhz_empty_list", plan_with("sm_mhz = []", "")},
      {"batch_sizes_string", plan_head + "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = \"32\"\n"},
      {"workloads_integer", plan_head + "[[cases]]\nworkloads = 5\nbatch_sizes = [32]\n"},
      {"cases_integer", plan_head + "cases = 5\n"},
      {"measure_integer", plan_head + plan_case + "measure = 1\n"},
      {"devices_integer", "[plan]\ndevices = 5\n" + plan_case},
      {"empty_case_table", plan_head + "[[cases]]\n"},
      {"duplicate_key", plan_head + "name = \"again\"\n" + plan_case},
      {"duplicate_table", plan_head + "[plan]\n" + plan_case},
      {"key_with_newline_escape", plan_head + "\"a\\nb\\nc\" = 1\n" + plan_case},
      {"order_with_newlines", plan_with("", "order = \"x\\ny\\nz\"")},
      {"mode_with_control_chars",
       plan_head + "[[cases]]\nworkloads = [\"resnet50\"]\nbatch_sizes = [32]\nmodes = [\"\\u0007\\r\"]\n"},
      {"unknown_workload_huge_name",
       plan_head + "[[cases]]\nworkloads = [\"" + std::string(100'000, 'w') + "\"]\nbatch_sizes = [32]\n"},
  };
}

// Seeded corruptions of a valid plan: bytes flipped, inserted or removed.
std::vector<PlanText> mutated_plans() {
  std::vector<PlanText> plans;
  const std::string valid = plan_with("sm_mhz = [1380, 1230]\npower_limit_w = [200]", "repetitions = 2");
  std::mt19937 generator(20261130);
  const std::string specials = "[]{}\"'=#.,:\\\n\x00\xff-+e";
  for (int i = 0; i < 12; ++i) {
    std::string text = valid;
    for (int edit = 0; edit < 1 + i % 4; ++edit) {
      const std::size_t at = generator() % text.size();
      const char c = specials[generator() % specials.size()];
      switch (generator() % 3) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + static_cast<long>(at), c); break;
        default: text.erase(at, 1); break;
      }
    }
    plans.push_back({"mutated_valid_plan_" + std::to_string(i), text, false});
  }
  return plans;
}

std::vector<PlanText> file_plans() {
  return {
      {"empty_file", ""},
      {"whitespace_only", " \n\t\n"},
      {"comments_only", "# nothing\n# here\n"},
      {"nul_bytes", plan_head + std::string("\0\0\0", 3) + plan_case},
      {"binary_garbage_1", seeded_bytes(1, 4'096)},
      {"binary_garbage_2", seeded_bytes(2, 65'536)},
      {"binary_garbage_3", seeded_bytes(3, 17)},
      {"invalid_utf8_in_string", "[plan]\nname = \"caf\xe9\"\n" + plan_case},
      {"invalid_utf8_in_comment", "# \xff\xfe\n" + plan_head + plan_case},
      {"invalid_utf8_in_key", plan_head + "\"\xc0\xaf\" = 1\n" + plan_case},
      {"utf8_bom", "\xef\xbb\xbf" + plan_with("", ""), false},
      {"crlf_lines",
       [] {
         std::string text = plan_with("", "");
         for (auto at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 2))
           text.insert(at, 1, '\r');
         return text;
       }(),
       false},
      {"long_string_500k", "[plan]\nname = \"" + std::string(500'000, 'x') + "\"\n" + plan_case},
      {"over_64_kib", repeated("# " + std::string(100, 'x') + "\n", 700) + plan_with("", "")},
      {"line_over_4096_bytes", plan_head + "# " + std::string(5'000, 'x') + "\n" + plan_case},
      {"five_thousand_values_on_a_line",
       plan_head + "description = [" + repeated("1, ", 5'000) + "1]\n" + plan_case},
  };
}

HostileCase plan_file_case(const std::string& name, const std::string& text,
                           std::vector<std::string> arguments, bool fake_gpu, bool must_fail) {
  return HostileCase{.name = name,
                     .prepare = [text](const fs::path& in) { write_file(in / "plan.toml", text); },
                     .arguments = std::move(arguments),
                     .fake_gpu = fake_gpu,
                     .must_fail = must_fail};
}

}  // namespace

std::vector<HostileCase> hostile_plan_cases() {
  std::vector<PlanText> plans;
  const auto add = [&plans](std::vector<PlanText> group, bool also_on_nvml) {
    for (auto& plan : group) {
      plan.also_on_nvml = also_on_nvml;
      plans.push_back(std::move(plan));
    }
  };
  add(nesting_plans(), true);
  add(number_plans(), true);
  add(range_and_grid_plans(), true);
  add(type_plans(), false);
  add(mutated_plans(), false);
  add(file_plans(), false);
  std::vector<HostileCase> cases;
  for (const auto& plan : plans) {
    cases.push_back(plan_file_case(plan.name + "_dry_run", plan.text,
                                   {"sweep", "{in}/plan.toml", "--device", "sim:v100", "--dry-run"}, false,
                                   plan.refused_before_any_change));
    if (plan.also_on_nvml) {
      cases.push_back(plan_file_case(
          plan.name + "_on_nvml", plan.text,
          {"sweep", "{in}/plan.toml", "--device", "0", "--allow-clock-changes", "--db", "{out}/db.sqlite"},
          true, true));
    }
  }
  // Plan paths that are not plan files.
  const auto path_case = [](const std::string& name, const std::string& path) {
    return HostileCase{
        .name = name, .prepare = nullptr, .arguments = {"sweep", path, "--device", "sim:v100", "--dry-run"}};
  };
  cases.push_back(path_case("plan_is_a_directory", "{in}"));
  cases.push_back(path_case("plan_is_dev_zero", "/dev/zero"));
  cases.push_back(path_case("plan_is_dev_null", "/dev/null"));
  cases.push_back(path_case("plan_is_missing", "{in}/missing.toml"));
  cases.push_back(
      HostileCase{.name = "plan_is_a_fifo",
                  .prepare = [](const fs::path& in) { ::mkfifo((in / "fifo.toml").c_str(), 0600); },
                  .arguments = {"sweep", "{in}/fifo.toml", "--device", "sim:v100", "--dry-run"}});
  // A command case whose program does not exist: a plan error, not measure's 127.
  cases.push_back(plan_file_case(
      "command_program_missing",
      plan_head + "[knobs]\nsm_mhz = [1380]\n[[cases]]\nname = \"train\"\n"
                  "command = [\"dvfslab-no-such-program\"]\n[measure]\nsettle_s = 0\n",
      {"sweep", "{in}/plan.toml", "--device", "0", "--allow-clock-changes", "--db", "{out}/db.sqlite"}, true,
      true));
  return cases;
}

std::vector<HostileCase> hostile_option_cases() {
  const auto option_case = [](const std::string& name, std::vector<std::string> arguments) {
    return HostileCase{.name = name,
                       .prepare = [](const fs::path& in) { write_file(in / "plan.toml", valid_plan); },
                       .arguments = std::move(arguments),
                       .fake_gpu = true};
  };
  return {
      option_case("sweep_empty_device", {"sweep", "{in}/plan.toml", "--device", "", "--allow-clock-changes",
                                         "--db", "{out}/db.sqlite"}),
      option_case("info_empty_device", {"info", "--device", ""}),
      option_case("measure_empty_device", {"measure", "--device", "", "--", "true"}),
      option_case("hold_empty_device",
                  {"hold", "--device", "", "--sm", "1980", "--allow-clock-changes", "--seconds", "0"}),
      option_case("restore_empty_device", {"restore", "--device", ""}),
      option_case("study_empty_device", {"study", "--device", "", "--out", "{out}/study"}),
      option_case("hold_sm_wraps",
                  {"hold", "--device", "0", "--sm", "4294968676", "--allow-clock-changes", "--seconds", "0"}),
      option_case("hold_power_wraps", {"hold", "--device", "0", "--power-limit", "4294967496",
                                       "--allow-clock-changes", "--seconds", "0"}),
      option_case("hold_seconds_inf",
                  {"hold", "--device", "0", "--sm", "1980", "--allow-clock-changes", "--seconds", "inf"}),
      option_case("measure_skip_iters_beyond_int64",
                  {"measure", "--device", "0", "--skip-iters", "99999999999999999999", "--", "true"}),
      option_case("measure_idle_seconds_inf",
                  {"measure", "--device", "0", "--idle-seconds", "inf", "--", "true"}),
      option_case("measure_idle_seconds_nan",
                  {"measure", "--device", "0", "--idle-seconds", "nan", "--", "true"}),
      option_case("measure_sample_ms_inf", {"measure", "--device", "0", "--sample-ms", "inf", "--", "true"}),
      option_case("sweep_shard_beyond_int",
                  {"sweep", "{in}/plan.toml", "--device", "0", "--shard", "1/4294967297", "--dry-run"}),
      option_case("sweep_shard_zero",
                  {"sweep", "{in}/plan.toml", "--device", "0", "--shard", "0/0", "--dry-run"}),
      // CLI11's Range lets NaN through: every comparison with it is false.
      option_case("exporter_interval_nan", {"exporter", "--device", "0", "--listen", "127.0.0.1:0", "--interval", "nan"}),
      option_case("search_duration_nan", {"search", "--device", "0", "--workload", "alexnet", "--duration", "nan",
                                          "--db", "{out}/db.sqlite"}),
      option_case("search_settle_nan", {"search", "--device", "0", "--workload", "alexnet", "--settle", "nan",
                                        "--db", "{out}/db.sqlite"}),
      option_case("hold_seconds_nan",
                  {"hold", "--device", "0", "--sm", "1980", "--allow-clock-changes", "--seconds", "nan"}),
      option_case("hold_seconds_negative",
                  {"hold", "--device", "0", "--sm", "1980", "--allow-clock-changes", "--seconds", "-1"}),
      option_case("unknown_option", {"sweep", "{in}/plan.toml", "--no-such-option"}),
      option_case("missing_argument", {"sweep"}),
  };
}

}  // namespace dvfslab::testing
