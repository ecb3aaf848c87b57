// PowerSGD's averaging step (Vogels et al. 2019, Algorithm 1), on Eigen:
//   P = M Q; all-reduce P; P = orthonormal basis of P (thin Householder QR);
//   Q = M^T P; all-reduce Q; Q /= ranks; estimate = P Q^T;
//   residual = M - estimate (M = gradient + the previous residual).
// Q stays for the next iteration (warm start).
#include <Eigen/Dense>

#include "core/compress/gradient_compressor.hpp"

namespace parashift::core {

double powersgd_average(std::span<float> grad, int rows, int cols, int rank, CompressorState& state,
                        ReduceGroup& group) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<RowMatrix> m(grad.data(), rows, cols);
  Eigen::Map<RowMatrix> q(state.q.data(), cols, rank);
  RowMatrix p = m * q;
  group.sum(std::span<float>(p.data(), static_cast<std::size_t>(p.size())));
  const Eigen::HouseholderQR<Eigen::MatrixXf> qr(p);
  p = qr.householderQ() * Eigen::MatrixXf::Identity(rows, rank);
  q = m.transpose() * p;
  group.sum(std::span<float>(q.data(), static_cast<std::size_t>(q.size())));
  q /= static_cast<float>(group.ranks());
  const RowMatrix estimate = p * q.transpose();
  Eigen::Map<RowMatrix> residual(state.residual.data(), rows, cols);
  residual = m - estimate;
  m = estimate;
  return 4.0 * static_cast<double>(p.size() + q.size());
}

}  // namespace parashift::core
