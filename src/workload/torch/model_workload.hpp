#pragma once
// One built-in network run as a dvfslab Workload: synthetic data made once on the
// device, a training or inference step in the requested precision, optionally
// captured as a CUDA graph.
#include <torch/types.h>

#include <memory>
#include <optional>

#include "dvfslab/torch_workloads.hpp"
#include "workload/torch/model_catalog.hpp"
#include "workload/torch/optimizers.hpp"
#include "workload/torch/torch_compat.hpp"

namespace dvfslab::torch_backend {

class ModelWorkload : public TorchWorkload {
 public:
  ModelWorkload(const ModelSpec& spec, const Case& workload_case, const WorkloadOptions& options);

  const Case& workload_case() const override { return case_; }
  std::string item_unit() const override;
  double items_per_iteration() const override;
  void prepare() override;
  void run_iterations(std::int64_t count) override;
  TorchRunInfo run_info() const override { return info_; }
  double last_loss() override;

  Network& network() { return *network_; }
  torch::Device device() const { return device_; }
  std::optional<torch::ScalarType> autocast_dtype() const { return autocast_dtype_; }
  // The synthetic batch's inputs: images, or token sequences.
  const torch::Tensor& input() const { return input_; }
  // The output of the latest inference step.
  const torch::Tensor& last_output() const { return output_; }

 private:
  void make_synthetic_batch(std::uint64_t seed);
  void step();
  void train_step();
  void infer_step();

  const ModelSpec& spec_;
  Case case_;
  int size_ = 0;  // image side or sequence length
  torch::Device device_;
  std::optional<torch::ScalarType> autocast_dtype_;
  std::shared_ptr<Network> network_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<LossScaler> loss_scaler_;
  bool use_graph_ = false;
  bool prepared_ = false;
  std::unique_ptr<StepGraph> graph_;
  torch::Tensor input_, target_, loss_, output_;
  TorchRunInfo info_;
};

}  // namespace dvfslab::torch_backend
