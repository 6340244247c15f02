#include "workload/torch/model_workload.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/cuda.h>

#include <charconv>
#include <string>

#include "dvfslab/error.hpp"
#include "workload/torch/layer_fusion.hpp"
#include "workload/torch/max_pool.hpp"
#include "workload/torch/own_kernels.hpp"

namespace dvfslab::torch_backend {
namespace {

// Learning rates of the reference recipes (torchvision's ImageNet SGD, BERT's AdamW).
constexpr double sgd_learning_rate = 0.01;
constexpr double sgd_momentum = 0.9;
constexpr double sgd_weight_decay = 1e-4;
constexpr double adamw_learning_rate = 1e-4;
constexpr double adamw_weight_decay = 0.01;
// Steps run on the capture stream before recording, so lazily made state exists.
constexpr int graph_warmup_steps = 3;

torch::Device resolve_device(const std::string& requested) {
  if (requested.empty()) return cuda_usable() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (requested == "cpu") return torch::Device(torch::kCPU);
  if (requested == "cuda" || requested.starts_with("cuda:")) {
    if (!cuda_usable()) {
      throw NotSupportedError(
          "torch device '" + requested +
          "': this LibTorch has no CUDA support or no GPU is visible; use --torch-device cpu");
    }
    int index = 0;
    if (requested != "cuda") {
      const char* first = requested.data() + 5;
      const char* last = requested.data() + requested.size();
      const auto [end, error] = std::from_chars(first, last, index);
      if (error != std::errc() || end != last || first == last) index = -1;
    }
    const auto count = static_cast<int>(torch::cuda::device_count());
    if (index < 0 || index >= count) {
      throw ConfigError("torch device '" + requested +
                        "' does not exist: choose cuda:0 to cuda:" + std::to_string(count - 1));
    }
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw ConfigError("unknown torch device '" + requested + "': choose cpu, cuda or cuda:N");
}

int resolve_size(const ModelSpec& spec, const WorkloadOptions& options) {
  const bool images = spec.input == InputKind::images;
  const int wrong = images ? options.sequence_length : options.image_size;
  if (wrong != 0) {
    throw ConfigError(spec.name + " takes " + (images ? "an image size" : "a sequence length") + ", not " +
                      (images ? "a sequence length" : "an image size"));
  }
  const int requested = images ? options.image_size : options.sequence_length;
  const int size = requested == 0 ? spec.default_size : requested;
  if (size < spec.min_size || size > spec.max_size) {
    throw ConfigError(spec.name + (images ? " image size " : " sequence length ") + std::to_string(size) +
                      " is out of range: choose " + std::to_string(spec.min_size) + " to " +
                      std::to_string(spec.max_size));
  }
  return size;
}

}  // namespace

ModelWorkload::ModelWorkload(const ModelSpec& spec, const Case& workload_case, const WorkloadOptions& options)
    : spec_(spec),
      case_(workload_case),
      size_(resolve_size(spec, options)),
      device_(resolve_device(options.torch_device)) {
  if (case_.batch < 1) {
    throw ConfigError("batch size " + std::to_string(case_.batch) + " is invalid: use 1 or more");
  }
  const bool images = spec.input == InputKind::images;
  info_.device = device_.str();
  info_.image_size = images ? size_ : 0;
  info_.sequence_length = images ? 0 : size_;
  info_.preset = preset_of(spec);

  switch (case_.precision) {
    case Precision::fp32: break;
    case Precision::tf32:
      if (!device_.is_cuda())
        info_.notices.push_back("TF32 exists on NVIDIA GPUs only; the CPU computes in FP32");
      break;
    case Precision::bf16: autocast_dtype_ = torch::kBFloat16; break;
    case Precision::fp16:
      if (!device_.is_cuda()) {
        throw NotSupportedError("fp16 autocast needs a CUDA device; use bf16 or fp32 on the CPU");
      }
      autocast_dtype_ = torch::kHalf;
      break;
  }
  set_tf32(case_.precision == Precision::tf32);
  set_cudnn_benchmark(options.cudnn_benchmark);

  torch::manual_seed(options.seed);
  network_ = spec.build();
  network_->to(device_);
  const bool channels_last = images && options.channels_last;
  if (channels_last) {
    torch::NoGradGuard no_grad;
    for (auto& parameter : network_->parameters()) {
      if (parameter.dim() == 4) parameter.set_data(parameter.contiguous(torch::MemoryFormat::ChannelsLast));
    }
  }
  network_->train(case_.mode == Mode::train);
  if (options.fused_layers) {
    if (case_.mode == Mode::infer) {
      info_.fused_layers = freeze_for_inference(*network_, autocast_dtype_.value_or(torch::kFloat));
    } else if (images && device_.is_cuda()) {
      info_.fused_layers = fuse_for_training(*network_);
    }
    // The own pooling kernels take channels-last CUDA activations only.
    if (channels_last && device_.is_cuda() && own_kernels_built())
      info_.own_kernel_pools = use_own_pool_kernels(*network_);
  }
  make_synthetic_batch(options.seed);
  if (channels_last) input_ = input_.contiguous(torch::MemoryFormat::ChannelsLast);

  if (case_.mode == Mode::train) {
    if (spec.optimizer == OptimizerKind::sgd_momentum) {
      optimizer_ = std::make_unique<SgdMomentum>(network_->parameters(), sgd_learning_rate, sgd_momentum,
                                                 sgd_weight_decay);
    } else {
      optimizer_ = std::make_unique<AdamW>(network_->parameters(), adamw_learning_rate, adamw_weight_decay);
    }
    if (case_.precision == Precision::fp16) loss_scaler_ = std::make_unique<LossScaler>(device_);
  }

  if (options.cuda_graph && device_.is_cuda()) {
    if (!StepGraph::supported()) {
      info_.notices.push_back("this LibTorch cannot capture CUDA graphs; running eager");
    } else if (loss_scaler_) {
      info_.notices.push_back(
          "fp16 training skips steps whose gradients overflow, which needs a host check each step; running "
          "eager");
    } else {
      use_graph_ = true;
    }
  }
}

void ModelWorkload::make_synthetic_batch(std::uint64_t seed) {
  // Drawn on the CPU from a dedicated generator, so the same seed gives the same
  // batch in every build and in PyTorch (torch.Generator().manual_seed(seed)).
  auto generator = at::detail::createCPUGenerator(seed);
  const auto batch = static_cast<std::int64_t>(case_.batch);
  if (spec_.input == InputKind::images) {
    if (device_.is_cuda()) {
      // The device's copy first: a batch too large for the GPU then fails as
      // LibTorch's out-of-memory error before the host draws it. On a host that
      // overcommits memory, drawing it first got the process killed instead.
      input_ = torch::empty({batch, 3, size_, size_}, torch::TensorOptions(torch::kFloat).device(device_));
      input_.copy_(torch::randn({batch, 3, size_, size_}, generator, torch::kFloat));
    } else {
      input_ = torch::randn({batch, 3, size_, size_}, generator, torch::kFloat);
    }
    target_ = torch::randint(imagenet_classes, {batch}, generator, torch::kLong).to(device_);
  } else if (spec_.name == "gpt2_small" || spec_.name == "llama") {
    // Targets are the inputs shifted by one token: next-token prediction.
    auto sequence = torch::randint(spec_.vocabulary, {batch, size_ + 1}, generator, torch::kLong);
    input_ = sequence.slice(1, 0, size_).contiguous().to(device_);
    target_ = sequence.slice(1, 1, size_ + 1).contiguous().to(device_);
  } else {
    input_ = torch::randint(spec_.vocabulary, {batch, size_}, generator, torch::kLong).to(device_);
    target_ = torch::randint(spec_.vocabulary, {batch, size_}, generator, torch::kLong).to(device_);
  }
}

std::string ModelWorkload::item_unit() const {
  return spec_.input == InputKind::images ? "images" : "tokens";
}

double ModelWorkload::items_per_iteration() const {
  return spec_.input == InputKind::images ? case_.batch : static_cast<double>(case_.batch) * size_;
}

void ModelWorkload::train_step() {
  optimizer_->zero_grad();
  torch::Tensor loss;
  {
    std::optional<AutocastScope> autocast;
    if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
    loss = network_->loss(input_, target_);
  }
  if (loss_scaler_) {
    loss_scaler_->scale(loss).backward();
    loss_scaler_->step(*optimizer_);
  } else {
    loss.backward();
    optimizer_->step();
  }
  loss_ = loss.detach();
}

void ModelWorkload::infer_step() {
  torch::NoGradGuard no_grad;
  std::optional<AutocastScope> autocast;
  if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
  output_ = network_->infer(input_);
}

void ModelWorkload::step() {
  if (case_.mode == Mode::train) {
    train_step();
  } else {
    infer_step();
  }
}

void ModelWorkload::prepare() {
  if (prepared_) return;
  prepared_ = true;
  if (use_graph_) {
    try {
      graph_ = std::make_unique<StepGraph>();
      graph_->capture([this] { step(); }, graph_warmup_steps);
    } catch (const std::exception& error) {
      use_graph_ = false;
      graph_.reset();
      const std::string reason = error.what();
      info_.notices.push_back("CUDA graph capture failed (" + reason.substr(0, reason.find('\n')) +
                              "); running eager");
    }
  }
  info_.cuda_graph = use_graph_;
}

void ModelWorkload::run_iterations(std::int64_t count) {
  prepare();
  for (std::int64_t i = 0; i < count; ++i) {
    if (use_graph_) {
      graph_->replay();
    } else {
      step();
    }
  }
  synchronize(device_);
}

double ModelWorkload::last_loss() {
  if (case_.mode != Mode::train)
    throw ConfigError(to_string(case_) + " runs inference: it has no training loss");
  if (!loss_.defined()) throw Error("no training step has run yet: call run_iterations first");
  return loss_.item<double>();
}

}  // namespace dvfslab::torch_backend
