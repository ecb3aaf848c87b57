#include "core/compress/compression_fit.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include <Eigen/Dense>

#include "core/compress/compression.hpp"
#include "core/compress/gradient_compressor.hpp"

namespace parashift::core {

double left_out_sq(const CompressionSpec& spec, std::span<const float> x, int rows, int cols) {
  switch (spec.kind) {
    case CompressorKind::None:
      return 0;
    case CompressorKind::TopK: {
      std::vector<double> sq(x.size());
      std::transform(x.begin(), x.end(), sq.begin(),
                     [](float v) { return static_cast<double>(v) * v; });
      const auto k = std::min(sq.size(), static_cast<std::size_t>(topk_entries(
                                             static_cast<double>(sq.size()), spec.density)));
      // The k largest first; what follows them is left out.
      std::nth_element(sq.begin(), sq.begin() + static_cast<std::ptrdiff_t>(k) - 1, sq.end(),
                       std::greater<>());
      double left = 0;
      for (std::size_t i = k; i < sq.size(); ++i) left += sq[i];
      return left;
    }
    case CompressorKind::Int8: {
      const auto b = static_cast<std::size_t>(spec.block);
      const std::size_t padded = (x.size() + b - 1) / b * b;
      std::vector<float> in(padded, 0.0f), codes(padded / 4), scales(padded / b), back(padded);
      std::copy(x.begin(), x.end(), in.begin());
      int8_quantise(in, spec.block, codes, scales, back);
      double left = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double d = static_cast<double>(in[i]) - back[i];
        left += d * d;
      }
      return left;
    }
    case CompressorKind::PowerSgd: {
      using Map =
          Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
      const Eigen::MatrixXd m = Map(x.data(), rows, cols).cast<double>();
      const Eigen::VectorXd s = Eigen::BDCSVD<Eigen::MatrixXd>(m).singularValues();  // descending
      double left = 0;
      for (Eigen::Index i = spec.rank; i < s.size(); ++i) left += s(i) * s(i);
      return left;
    }
  }
  return 0;
}

}  // namespace parashift::core
