#include "hw/snapshot/byte_stream.hpp"

#include <cstring>
#include <string>

#include "hw/hw_error.hpp"

namespace parashift::hw {

void ByteWriter::raw(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::byte*>(data);
  bytes_.insert(bytes_.end(), p, p + n);
}

void ByteWriter::i64(std::int64_t v) {
  raw(&v, sizeof v);
}

void ByteWriter::ints(const std::vector<int>& v) {
  i64(static_cast<std::int64_t>(v.size()));
  for (int x : v) i64(x);
}

void ByteWriter::matrix(const Matrix& m) {
  i64(m.rows());
  i64(m.cols());
  raw(m.data(), static_cast<std::size_t>(m.size()) * sizeof(float));
}

void ByteWriter::floats(std::span<const float> v) {
  i64(static_cast<std::int64_t>(v.size()));
  raw(v.data(), v.size_bytes());
}

void ByteReader::raw(void* data, std::size_t n) {
  if (bytes_.size() - at_ < n)
    throw HwError("shard payload ends early: need " + std::to_string(n) + " bytes at offset " +
                  std::to_string(at_) + " of " + std::to_string(bytes_.size()));
  if (n == 0) return;  // an empty vector's data() may be null: no memcpy
  std::memcpy(data, bytes_.data() + at_, n);
  at_ += n;
}

std::int64_t ByteReader::i64() {
  std::int64_t v = 0;
  raw(&v, sizeof v);
  return v;
}

std::vector<int> ByteReader::ints() {
  const auto n = i64();
  if (n < 0 || n > 1'000'000)
    throw HwError("shard payload: bad vector length " + std::to_string(n));
  std::vector<int> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(static_cast<int>(i64()));
  return v;
}

void ByteReader::matrix(Matrix& m) {
  const auto rows = i64();
  const auto cols = i64();
  if (rows != m.rows() || cols != m.cols())
    throw HwError("shard payload: matrix " + std::to_string(rows) + "x" + std::to_string(cols) +
                  " where " + std::to_string(m.rows()) + "x" + std::to_string(m.cols()) +
                  " was expected");
  raw(m.data(), static_cast<std::size_t>(m.size()) * sizeof(float));
}

void ByteReader::floats(std::span<float> v) {
  const auto n = i64();
  if (n != static_cast<std::int64_t>(v.size()))
    throw HwError("shard payload: " + std::to_string(n) + " floats where " +
                  std::to_string(v.size()) + " were expected");
  raw(v.data(), v.size_bytes());
}

std::vector<float> ByteReader::float_vector() {
  const auto n = i64();
  if (n < 0 || static_cast<std::size_t>(n) > (bytes_.size() - at_) / sizeof(float))
    throw HwError("shard payload: bad float vector length " + std::to_string(n));
  std::vector<float> v(static_cast<std::size_t>(n));
  raw(v.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace parashift::hw
