// Flat little-endian (host order) serialisation of shard payloads: scalars,
// int vectors and float matrices, read back in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hw/model/layer.hpp"

namespace parashift::hw {

class ByteWriter {
 public:
  void i64(std::int64_t v);
  void ints(const std::vector<int>& v);
  void matrix(const Matrix& m);
  void floats(std::span<const float> v);
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  void raw(const void* data, std::size_t n);
  std::vector<std::byte> bytes_;
};

/// Throws HwError when the payload ends early or a matrix shape differs.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::int64_t i64();
  std::vector<int> ints();
  /// Reads into `m`, whose shape must match what was written.
  void matrix(Matrix& m);
  /// Reads into `v`, whose length must match what was written.
  void floats(std::span<float> v);
  /// A float vector of the length written before it (bounded by what is left).
  std::vector<float> float_vector();
  bool done() const { return at_ == bytes_.size(); }

 private:
  void raw(void* data, std::size_t n);
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
};

}  // namespace parashift::hw
