// The executor's element-wise kernels, shared by the layer (layer.cpp) and by
// calibration, which times exactly these functions per element.
#pragma once

#include "hw/model/layer.hpp"

namespace parashift::hw {

/// gelu(u), tanh form, element-wise.
Matrix gelu(const Matrix& u);
/// d loss / d u = dact .* gelu'(u).
Matrix gelu_backward(const Matrix& dact, const Matrix& u);
/// The same two on `n` contiguous floats (the device layer's host kernels).
void gelu(const float* u, float* act, std::size_t n);
void gelu_backward(const float* dact, const float* u, float* du, std::size_t n);
/// In place on a seq x seq block of scores: row i keeps columns 0..i,
/// softmax over them, zeros after (causal).
void causal_softmax(Eigen::Ref<Matrix> scores);
/// dS = P .* (dP - rowsum(P .* dP)) x scale: softmax backward with the
/// score scale folded in.
Matrix causal_softmax_backward(const Eigen::Ref<const Matrix>& probs,
                               const Eigen::Ref<const Matrix>& dprobs, float scale);

}  // namespace parashift::hw
