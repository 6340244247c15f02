// dvfslab run-workload: the command line of the built-in LibTorch workloads, which
// run in the LibTorch module (cli/torch_module.hpp).
#include <memory>

#include "cli/commands.hpp"
#include "cli/number_checks.hpp"
#include "cli/torch_module.hpp"

namespace dvfslab::cli {

void add_run_workload_command(CLI::App& app) {
  auto args = std::make_shared<RunWorkloadArgs>();
  auto* command = app.add_subcommand(
      "run-workload",
      "Run one built-in deep-learning workload (LibTorch) on synthetic data and print its throughput.\n"
      "With DVFSLAB_MARK_FD set, writes `dvfslab:iter N items M` progress markers to that descriptor, so\n"
      "`dvfslab measure -- dvfslab run-workload ...` can report energy per iteration and per item.");
  command->add_option("name", args->name, "Workload name (see --list)");
  command->add_flag("--list", args->list, "List the workloads with their default batch and unit, then exit");
  command->add_option("--batch,-b", args->batch, "Batch size (default: the workload's, see --list)")
      ->check(positive_whole_number());
  command
      ->add_option("--mode", args->mode,
                   "train (forward, loss, backward, optimizer step), infer (forward only) or, for llama, "
                   "generate (prefill a prompt batch into a KV cache, then decode token by token)")
      ->capture_default_str();
  command
      ->add_option("--precision", args->precision,
                   "fp32 (TF32 off), tf32, bf16 (autocast) or fp16 (autocast with loss scaling)")
      ->capture_default_str();
  command->add_option("--iters,-n", args->iterations, "Measured iterations")->capture_default_str();
  command->add_option("--warmup", args->warmup, "Iterations run before measuring (after graph capture)")
      ->capture_default_str();
  // 0 stands for the model's own size in WorkloadOptions: typed by a user it would
  // silently mean the default, so the command line takes positive sizes only.
  command
      ->add_option("--image-size", args->options.image_size,
                   "Image side in pixels for the CNNs (default 224)")
      ->check(positive_whole_number());
  command
      ->add_option("--seq-len", args->options.sequence_length,
                   "Sequence length in tokens for bert_base (default 128) and gpt2_small (default 1024)")
      ->check(positive_whole_number());
  command->add_option("--preset", args->preset, "Size of llama: tiny, 125m (default), 1b or 7b");
  command
      ->add_option("--prompt-len", args->prompt_length,
                   "--mode generate: prompt tokens per sequence (default 128)")
      ->check(positive_whole_number());
  command
      ->add_option("--gen-len", args->generated_length,
                   "--mode generate: tokens decoded per sequence (default 128)")
      ->check(positive_whole_number());
  command->add_flag("--no-channels-last", args->no_channels_last,
                    "Keep CNN images and weights in NCHW instead of channels-last (NHWC)");
  command->add_flag("--no-cuda-graph", args->no_cuda_graph,
                    "Launch every step eagerly instead of replaying a captured CUDA graph");
  command->add_flag("--no-cudnn-benchmark", args->no_cudnn_benchmark,
                    "Use cuDNN's heuristics instead of timing its algorithms once");
  command->add_flag("--no-fusion", args->no_fusion,
                    "Run the CNNs layer by layer as PyTorch does: no batch norm folded into the convolutions "
                    "for inference and no fused convolution + bias + ReLU kernels");
  command->add_option("--torch-device", args->options.torch_device,
                      "cpu, cuda or cuda:N (default: cuda:0 when available, else cpu)");
  command->add_option("--seed", args->options.seed, "Seed of the weights and the synthetic batch")
      ->capture_default_str();
  command
      ->add_option("--mark-every", args->mark_every,
                   "With DVFSLAB_MARK_FD set: iterations per marker; each marker waits for the device, "
                   "so raise it when iterations take well under a millisecond")
      ->capture_default_str();
  command->add_option(
      "--kernel-profile", args->kernel_profile,
      "After the timed iterations, run --profile-iters more under LibTorch's profiler and write "
      "where they spent their time to this JSON file: GPU kernels on a GPU, ATen operators' self "
      "time on the CPU (the timed figures are taken without the profiler)");
  command->add_option("--profile-iters", args->profile_iterations, "Iterations profiled by --kernel-profile")
      ->capture_default_str();
  command->add_flag("--json", args->json, "Print the result (or the list) as JSON on stdout");
  command->callback([args] { run_workload_in_module(*args); });
}

}  // namespace dvfslab::cli
