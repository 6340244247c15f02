// What the own kernels' callers share, on the CPU: tensors made dense and moved to
// a 16-byte boundary only when they are not already.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "workload/torch/own_kernels.hpp"

namespace dvfslab::torch_backend {
namespace {

TEST(DenseForPacks, KeepsADenseAlignedTensorAsItIs) {
  const auto tensor = torch::arange(32, torch::kFloat);
  ASSERT_TRUE(aligned_for_packs(tensor));
  EXPECT_TRUE(dense_for_packs(tensor).is_same(tensor));
}

TEST(DenseForPacks, CopiesATensorOffTheBoundaryOrStrided) {
  const auto base = torch::arange(33, torch::kFloat);
  const auto off_boundary = base.narrow(0, 1, 32);
  ASSERT_FALSE(aligned_for_packs(off_boundary));
  const auto moved = dense_for_packs(off_boundary);
  EXPECT_TRUE(aligned_for_packs(moved));
  EXPECT_TRUE(moved.is_contiguous());
  EXPECT_TRUE(torch::equal(moved, off_boundary));

  const auto transposed = torch::arange(24, torch::kFloat).view({4, 6}).t();
  const auto dense = dense_for_packs(transposed);
  EXPECT_TRUE(dense.is_contiguous());
  EXPECT_TRUE(aligned_for_packs(dense));
  EXPECT_TRUE(torch::equal(dense, transposed));
}

}  // namespace
}  // namespace dvfslab::torch_backend
