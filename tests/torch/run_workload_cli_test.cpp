// `dvfslab run-workload` end to end: JSON output, progress markers, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::string markers;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The shell's wait status for `command`.
int run_shell(const std::string& command) {
  const char* const argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t child = 0;
  if (posix_spawn(&child, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0)
    return -1;
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

// Runs dvfslab with `arguments`; with markers, descriptor 3 is open on a marker
// file named by DVFSLAB_MARK_FD, otherwise `environment` prefixes the command.
CommandResult run_dvfslab(const std::string& arguments, bool with_markers,
                          const std::string& environment = "", const std::string& binary = DVFSLAB_BINARY) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("dvfslab_run_workload_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = dir / "out", err = dir / "err", markers = dir / "markers";
  std::string command = (with_markers ? std::string("DVFSLAB_MARK_FD=3 ") : environment) + binary + " " +
                        arguments + " >" + out.string() + " 2>" + err.string() +
                        (with_markers ? " 3>" + markers.string() : "");
  const int status = run_shell(command);
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out);
  result.err = read_file(err);
  if (with_markers) result.markers = read_file(markers);
  // File by file, not std::filesystem::remove_all: the libtorch.so of PyTorch's
  // CUDA wheel exports that function as a stub that jumps to address 0, and this
  // binary binds to it (docs/workloads.md, "Tests on a GPU machine").
  for (const auto& file : {out, err, markers}) std::filesystem::remove(file);
  std::filesystem::remove(dir);
  return result;
}

TEST(RunWorkloadCli, JsonResultAndOneMarkerPerIteration) {
  const auto result = run_dvfslab(
      "run-workload resnet50 --batch 2 --image-size 32 --iters 3 --warmup 1 --torch-device cpu --json", true);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["workload"], "resnet50");
  EXPECT_EQ(json["mode"], "train");
  EXPECT_EQ(json["batch"], 2);
  EXPECT_EQ(json["iterations"], 3);
  EXPECT_EQ(json["item_unit"], "images");
  EXPECT_EQ(json["device"], "cpu");
  EXPECT_GT(json["items_per_s"].get<double>(), 0.0);
  EXPECT_TRUE(json["loss"].is_number());
  EXPECT_EQ(result.markers,
            "dvfslab:iter 1 items 2\n"
            "dvfslab:begin measured\n"
            "dvfslab:iter 1 items 2\n"
            "dvfslab:iter 1 items 2\n"
            "dvfslab:iter 1 items 2\n"
            "dvfslab:end measured\n");
}

TEST(RunWorkloadCli, MarkersCanBeBatched) {
  const auto result = run_dvfslab(
      "run-workload gpt2_small --mode infer --batch 1 --seq-len 4 --iters 5 --warmup 0 --mark-every 2 "
      "--torch-device cpu",
      true);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("tokens/s"));
  EXPECT_EQ(result.markers,
            "dvfslab:begin measured\n"
            "dvfslab:iter 2 items 8\n"
            "dvfslab:iter 2 items 8\n"
            "dvfslab:iter 1 items 4\n"
            "dvfslab:end measured\n");
}

TEST(RunWorkloadCli, FusionIsReportedAndCanBeTurnedOff) {
  const std::string inference =
      "run-workload googlenet --mode infer --batch 1 --image-size 32 --iters 1 --warmup 0 "
      "--torch-device cpu";
  const auto fused = run_dvfslab(inference + " --json", false);
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  EXPECT_EQ(nlohmann::json::parse(fused.out)["fused_layers"], 57);
  EXPECT_EQ(nlohmann::json::parse(fused.out)["own_kernel_pools"], 0) << "they run on CUDA only";
  const auto layer_by_layer = run_dvfslab(inference + " --json --no-fusion", false);
  ASSERT_EQ(layer_by_layer.exit_code, 0) << layer_by_layer.err;
  EXPECT_EQ(nlohmann::json::parse(layer_by_layer.out)["fused_layers"], 0);
  const auto text = run_dvfslab(inference, false);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("on cpu (57 fused convolution units)"));

  const std::string gpt2 =
      "run-workload gpt2_small --mode infer --batch 1 --seq-len 4 --iters 1 --warmup 0 --torch-device cpu";
  const auto blocks = run_dvfslab(gpt2, false);
  ASSERT_EQ(blocks.exit_code, 0) << blocks.err;
  EXPECT_THAT(blocks.out, HasSubstr("on cpu (12 fused decoder blocks)"));
  const auto plain = run_dvfslab(gpt2 + " --no-fusion", false);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out, Not(HasSubstr("fused")));
}

// The profile is taken after the timed run and written as JSON: here on the CPU,
// where it lists ATen operators by self time (nested operators taken out, so the
// entries add up to no more than the profiled iterations' wall time).
TEST(RunWorkloadCli, KernelProfileListsWhereTheIterationsWent) {
  const auto dir = std::filesystem::temp_directory_path() / ("dvfslab_profile_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "profile.json";
  const auto result = run_dvfslab(
      "run-workload alexnet --mode infer --batch 2 --image-size 64 --iters 1 "
      "--warmup 0 --torch-device cpu --profile-iters 2 --json --kernel-profile " +
          path.string(),
      false);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out)["kernel_profile"], path.string());
  const auto profile = nlohmann::json::parse(read_file(path));
  EXPECT_EQ(profile["workload"], "alexnet");
  EXPECT_EQ(profile["iterations"], 2);
  EXPECT_EQ(profile["entries_are"], "CPU operators, self time");
  const auto& entries = profile["entries"];
  ASSERT_FALSE(entries.empty());
  double shares = 0, total_ms = 0, previous_ms = entries[0]["ms_per_iteration"].get<double>();
  bool convolution = false;
  for (const auto& entry : entries) {
    const double ms = entry["ms_per_iteration"].get<double>();
    EXPECT_LE(ms, previous_ms) << "entries are sorted, most time first";
    EXPECT_GE(ms, 0.0);
    EXPECT_GT(entry["calls_per_iteration"].get<double>(), 0.0);
    previous_ms = ms;
    shares += entry["share"].get<double>();
    total_ms += ms;
    convolution = convolution || entry["name"].get<std::string>().find("conv") != std::string::npos;
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_NEAR(total_ms, profile["total_ms_per_iteration"].get<double>(), 1e-6);
  EXPECT_TRUE(convolution) << profile.dump(1);

  const auto text = run_dvfslab(
      "run-workload alexnet --mode infer --batch 1 --image-size 64 --iters 1 "
      "--warmup 0 --torch-device cpu --kernel-profile " +
          path.string(),
      false);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("kernel profile of 5 more iterations in " + path.string()));
  std::filesystem::remove(path);
  std::filesystem::remove(dir);
}

// A path that cannot be written is refused before the run, in one line; a write
// that fails is an error; generation has no profile.
TEST(RunWorkloadCli, KernelProfileBadPathsAreOneLineErrors) {
  const std::string run =
      "run-workload alexnet --mode infer --batch 1 --image-size 64 --iters 1 --warmup 0 "
      "--torch-device cpu --kernel-profile ";
  for (const std::string path : {"''", "/nonexistent-dir/p.json", "/tmp"}) {
    const auto refused = run_dvfslab(run + path, false);
    EXPECT_EQ(refused.exit_code, 3) << path;
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
    EXPECT_TRUE(refused.out.empty()) << path << ": refused before the run";
  }
  const auto full = run_dvfslab(run + "/dev/full", false);
  EXPECT_EQ(full.exit_code, 1);
  EXPECT_THAT(full.err, HasSubstr("/dev/full"));
  const auto iterations = run_dvfslab(run + "/tmp/p.json --profile-iters 0", false);
  EXPECT_EQ(iterations.exit_code, 3);
  EXPECT_THAT(iterations.err, HasSubstr("--profile-iters"));
  const auto generate = run_dvfslab(
      "run-workload llama --preset tiny --mode generate --prompt-len 4 --gen-len 2 --batch 1 "
      "--torch-device cpu --kernel-profile /tmp/p.json",
      false);
  EXPECT_EQ(generate.exit_code, 3);
  EXPECT_THAT(generate.err, HasSubstr("--kernel-profile is for --mode train and infer"));
}

TEST(RunWorkloadCli, ABatchTooLargeForMemoryIsOneLineThatSaysWhatToDo) {
  const auto result = run_dvfslab(
      "run-workload alexnet --mode infer --batch 2000000000 --image-size 64 --iters 1 --warmup 0 "
      "--torch-device cpu",
      false);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("dvfslab: error: LibTorch ran out of memory: "));
  EXPECT_THAT(result.err, HasSubstr("choose a smaller --batch"));
  EXPECT_THAT(result.err, Not(HasSubstr("frame #")));
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
}

TEST(RunWorkloadCli, AZeroSizeIsRefusedNotTakenAsTheDefault) {
  for (const std::string option : {"--image-size 0", "--seq-len 0", "--batch 0"}) {
    const auto result =
        run_dvfslab("run-workload alexnet --mode infer --iters 1 --torch-device cpu " + option, false);
    EXPECT_EQ(result.exit_code, 2) << option << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr(option.substr(0, option.find(' ')) + ": must be 1 or more, not 0"));
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_TRUE(result.out.empty()) << option;
  }
}

TEST(RunWorkloadCli, ListShowsEveryWorkload) {
  const auto result = run_dvfslab("run-workload --list --json", false);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto list = nlohmann::json::parse(result.out);
  ASSERT_EQ(list.size(), 7U);
  EXPECT_EQ(list[3]["name"], "resnet50");
  EXPECT_EQ(list[3]["default_batch"], 128);
  EXPECT_EQ(list[4]["unit"], "tokens");
  EXPECT_EQ(list[6]["name"], "llama");
}

TEST(RunWorkloadCli, LlamaGenerateReportsPrefillAndDecodeAsTwoPhases) {
  const auto result = run_dvfslab(
      "run-workload llama --preset tiny --mode generate --prompt-len 8 --gen-len 8 --batch 2 --iters 2 "
      "--warmup 1 --torch-device cpu --json",
      true);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  SCOPED_TRACE("output: " + result.out);
  const auto json = nlohmann::json::parse(result.out);
  // Checked, typed reads (at(), get<>()): a const json's operator[] on a missing key
  // is undefined behaviour, and gtest cannot print a nlohmann::json (it recurses
  // into its elements without end), so a failing comparison of two crashes the test.
  EXPECT_EQ(json.at("mode").get<std::string>(), "generate");
  EXPECT_EQ(json.at("preset").get<std::string>(), "tiny");
  for (const std::string phase : {"prefill", "decode"}) {
    EXPECT_EQ(json.at(phase).at("tokens").get<int>(), 32) << phase;  // 2 rounds × batch 2 × 8 tokens
    EXPECT_GT(json.at(phase).at("seconds").get<double>(), 0.0) << phase;
    EXPECT_GT(json.at(phase).at("tokens_per_s").get<double>(), 0.0) << phase;
  }
  EXPECT_EQ(result.markers,
            "dvfslab:begin prefill\n"
            "dvfslab:iter 1 items 16\n"
            "dvfslab:iter 1 items 16\n"
            "dvfslab:end prefill\n"
            "dvfslab:begin decode\n"
            "dvfslab:iter 1 items 16\n"
            "dvfslab:iter 1 items 16\n"
            "dvfslab:end decode\n");

  const auto text = run_dvfslab(
      "run-workload llama --preset tiny --mode generate --prompt-len 8 --gen-len 8 --batch 2 --iters 1 "
      "--warmup 0 --torch-device cpu",
      false);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("prefill"));
  EXPECT_THAT(text.out, HasSubstr("decode "));
}

TEST(RunWorkloadCli, GenerateOptionsOutsideGenerateAreErrors) {
  const auto lengths = run_dvfslab("run-workload gpt2_small --prompt-len 8 --torch-device cpu", false);
  EXPECT_EQ(lengths.exit_code, 3);
  EXPECT_THAT(lengths.err, HasSubstr("--mode generate"));
  const auto model = run_dvfslab("run-workload bert_base --mode generate --torch-device cpu", false);
  EXPECT_EQ(model.exit_code, 3);
  EXPECT_THAT(model.err, HasSubstr("is for llama"));
  const auto preset = run_dvfslab("run-workload llama --preset 13b --torch-device cpu", false);
  EXPECT_EQ(preset.exit_code, 3);
  EXPECT_THAT(preset.err, HasSubstr("choose one of tiny, 125m, 1b, 7b"));
}

// A LibTorch without CUDA (Debian's) picks the CPU by itself: the run says so and
// shows its progress instead of training silently for an hour.
TEST(RunWorkloadCli, FirstContact_CpuRunSaysSoAndShowsProgress) {
  const auto result =
      run_dvfslab("run-workload resnet50 --batch 2 --image-size 32 --iters 2 --warmup 1", false);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  if (result.out.find(" on cuda") != std::string::npos) GTEST_SKIP() << "this LibTorch runs on a GPU";
  EXPECT_THAT(result.err, HasSubstr("dvfslab: notice: running on the CPU"));
  EXPECT_THAT(result.err, HasSubstr("dvfslab: run-workload on the CPU: warm-up 1/1 iterations"));
  EXPECT_THAT(result.err, HasSubstr("dvfslab: run-workload on the CPU: measured 2/2 iterations"));
  EXPECT_THAT(result.out, HasSubstr("2 iterations in"));
}

TEST(RunWorkloadCli, ErrorsAreOneLineWithTheChoices) {
  const auto unknown = run_dvfslab("run-workload resnet51 --torch-device cpu", false);
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_THAT(unknown.err,
              HasSubstr("choose one of alexnet, vgg16, googlenet, resnet50, bert_base, gpt2_small"));
  EXPECT_TRUE(unknown.out.empty());

  const auto precision = run_dvfslab("run-workload resnet50 --precision fp8 --torch-device cpu", false);
  EXPECT_EQ(precision.exit_code, 3);
  EXPECT_THAT(precision.err, HasSubstr("fp32"));

  const auto mark_fd = run_dvfslab("run-workload resnet50 --image-size 32 --iters 1 --torch-device cpu",
                                   false, "DVFSLAB_MARK_FD=x ");
  EXPECT_EQ(mark_fd.exit_code, 3);
  EXPECT_THAT(mark_fd.err, HasSubstr("not a file descriptor number"));
}

// LibTorch is a module that dvfslab loads only when a command runs its models:
// linked in, its start-up cost every command ~0.8 s (docs/workloads.md).
TEST(RunWorkloadCli, OnlyTheCommandsThatRunModelsLoadLibTorch) {
  const auto version = run_dvfslab("--version", false, "LD_DEBUG=files ");
  ASSERT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.err, HasSubstr("libc.so"));  // the loader's trace is there
  EXPECT_THAT(version.err, Not(HasSubstr("libtorch")));
  EXPECT_THAT(version.err, Not(HasSubstr("dvfslab-run-workload")));

  const auto list = run_dvfslab("run-workload --list", false, "LD_DEBUG=files ");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.err, HasSubstr("dvfslab-run-workload.so"));
  EXPECT_THAT(list.err, HasSubstr("libtorch"));
}

TEST(RunWorkloadCli, AMissingLibTorchModuleIsOneLineThatSaysWhereItWasLookedFor) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("dvfslab_no_module_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto copy = dir / "dvfslab";
  std::filesystem::copy_file(DVFSLAB_BINARY, copy, std::filesystem::copy_options::overwrite_existing);

  const auto help = run_dvfslab("run-workload --help", false, "", copy.string());
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("--kernel-profile"));

  const auto list = run_dvfslab("run-workload --list", false, "", copy.string());
  EXPECT_NE(list.exit_code, 0);
  EXPECT_THAT(list.err, HasSubstr("LibTorch module is missing: found neither " +
                                  (dir / "dvfslab-run-workload.so").string()));
  EXPECT_THAT(list.err, HasSubstr("rebuild or reinstall dvfslab"));
  EXPECT_EQ(std::count(list.err.begin(), list.err.end(), '\n'), 1) << list.err;
  EXPECT_TRUE(list.out.empty());
  std::filesystem::remove(copy);
  std::filesystem::remove(dir);
}

TEST(RunWorkloadCli, AModuleOfAnotherBuildIsRefusedInOneLineBeforeItIsCalled) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("dvfslab_stale_module_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto copy = dir / "dvfslab";
  const auto module = dir / "dvfslab-run-workload.so";
  std::filesystem::copy_file(DVFSLAB_BINARY, copy, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(DVFSLAB_STALE_MODULE, module, std::filesystem::copy_options::overwrite_existing);

  const auto list = run_dvfslab("run-workload --list", false, "", copy.string());
  EXPECT_NE(list.exit_code, 0);
  EXPECT_THAT(list.err,
              HasSubstr("LibTorch module " + module.string() +
                        " is from another build of dvfslab (0.0.1+0000000000000000, this dvfslab is "));
  EXPECT_THAT(list.err, HasSubstr("reinstall dvfslab so that both come from one build"));
  EXPECT_EQ(std::count(list.err.begin(), list.err.end(), '\n'), 1) << list.err;
  EXPECT_TRUE(list.out.empty());
  // The commands that run no LibTorch model never load it, so they keep working.
  const auto version = run_dvfslab("--version", false, "", copy.string());
  EXPECT_EQ(version.exit_code, 0) << version.err;
  for (const auto& file : {copy, module}) std::filesystem::remove(file);  // not remove_all: see run_dvfslab
  std::filesystem::remove(dir);
}

}  // namespace
