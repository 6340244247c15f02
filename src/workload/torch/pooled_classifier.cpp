#include "workload/torch/pooled_classifier.hpp"

namespace dvfslab::torch_backend {

PooledClassifier::PooledClassifier(torch::nn::Sequential features, int pooled_size,
                                   torch::nn::Sequential classifier) {
  features_ = register_module("features", std::move(features));
  pool_ = register_module("avgpool", torch::nn::AdaptiveAvgPool2d(
                                         torch::nn::AdaptiveAvgPool2dOptions({pooled_size, pooled_size})));
  classifier_ = register_module("classifier", std::move(classifier));
}

torch::Tensor PooledClassifier::infer(const torch::Tensor& images) {
  return classifier_->forward(torch::flatten(pool_->forward(features_->forward(images)), 1));
}

torch::Tensor PooledClassifier::loss(const torch::Tensor& images, const torch::Tensor& labels) {
  return torch::nn::functional::cross_entropy(infer(images), labels);
}

}  // namespace dvfslab::torch_backend
