// LibTorch reports its failures as c10::Error, whose what() carries a C++ backtrace
// of LibTorch's own frames: a user of the command line needs its first line, and
// for an allocation that failed, what to ask for instead. No fmt here: a PyTorch
// wheel's include directories carry their own fmt, which the project's does not link.
#include <c10/util/Exception.h>

#include <string>
#include <string_view>

#include "workload/torch/torch_errors.hpp"

#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

std::string first_line(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

bool is_allocation_failure(std::string_view message) {
  return message.find("out of memory") != std::string_view::npos ||
         message.find("can't allocate memory") != std::string_view::npos;
}

class ExplainedTorchWorkload : public Workload {
 public:
  explicit ExplainedTorchWorkload(std::unique_ptr<TorchWorkload> workload) : workload_(std::move(workload)) {}
  const Case& workload_case() const override { return workload_->workload_case(); }
  std::string item_unit() const override { return workload_->item_unit(); }
  double items_per_iteration() const override { return workload_->items_per_iteration(); }
  void prepare() override {
    explain_torch_errors([this] { workload_->prepare(); });
  }
  void run_iterations(std::int64_t count) override {
    explain_torch_errors([this, count] { workload_->run_iterations(count); });
  }

 private:
  std::unique_ptr<TorchWorkload> workload_;
};

}  // namespace

void explain_torch_errors(const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::Error& error) {
    const std::string message = first_line(error.what_without_backtrace());
    if (dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr || is_allocation_failure(message)) {
      throw Error("LibTorch ran out of memory: " + message + "; choose a smaller --batch (or a shorter sequence)");
    }
    throw Error("LibTorch failed: " + message);
  }
}

std::unique_ptr<Workload> with_explained_errors(std::unique_ptr<TorchWorkload> workload) {
  return std::make_unique<ExplainedTorchWorkload>(std::move(workload));
}

}  // namespace dvfslab
