#pragma once
// Optimizers whose whole step is device work with no host-side state that
// changes between steps, so a step can be captured once in a CUDA graph and
// replayed: state is allocated up front and AdamW's step count lives on the device.
#include <torch/types.h>

#include <vector>

namespace dvfslab::torch_backend {

// Which kernels an optimizer step runs: one fused kernel where the LibTorch has it
// for the parameters' device (fused_steps.hpp), else multi-tensor foreach kernels.
// Both compute the same update; `foreach` exists to compare them.
enum class StepKernels { fused_where_available, foreach };

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Drops the gradients (as set_to_none does), so backward allocates them fresh.
  void zero_grad();
  // Updates every parameter that has a gradient.
  virtual void step() = 0;
  // The gradients of the parameters that have one, in parameter order.
  std::vector<torch::Tensor> gradients() const;
  // Whether step() runs the fused kernel.
  bool fused() const { return fused_; }

 protected:
  Optimizer(std::vector<torch::Tensor> parameters, StepKernels kernels);

  std::vector<torch::Tensor> parameters_;
  bool fused_ = false;
};

// SGD with momentum (PyTorch's formulation: buffer = μ·buffer + g + λ·p; p -= lr·buffer).
class SgdMomentum : public Optimizer {
 public:
  SgdMomentum(std::vector<torch::Tensor> parameters, double learning_rate, double momentum,
              double weight_decay, StepKernels kernels = StepKernels::fused_where_available);
  void step() override;

 private:
  double learning_rate_, momentum_, weight_decay_;
  std::vector<torch::Tensor> momentum_buffers_;
};

// AdamW (decoupled weight decay, bias-corrected moments) as PyTorch defines it.
class AdamW : public Optimizer {
 public:
  AdamW(std::vector<torch::Tensor> parameters, double learning_rate, double weight_decay,
        StepKernels kernels = StepKernels::fused_where_available);
  void step() override;

 private:
  double learning_rate_, weight_decay_;
  double beta1_ = 0.9, beta2_ = 0.999, epsilon_ = 1e-8;
  torch::Tensor step_count_;  // on the parameters' device
  std::vector<torch::Tensor> first_moments_, second_moments_;
};

// Dynamic loss scaling for FP16 training (PyTorch's GradScaler rules: start at
// 2^16, halve on overflow and skip the step, double after 2000 clean steps).
class LossScaler {
 public:
  explicit LossScaler(const torch::Device& device);
  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_; }
  // Unscales the gradients, steps unless one was not finite, updates the scale.
  // Reads the overflow flag on the host, as GradScaler does.
  void step(Optimizer& optimizer);

 private:
  torch::Tensor scale_, growth_tracker_, found_infinite_;
};

}  // namespace dvfslab::torch_backend
