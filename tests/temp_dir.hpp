// Unique temporary directories for tests, so two checkouts (or two test
// processes) on one machine never write the same file: each directory comes
// from mkdtemp under the system temporary folder and is removed afterwards.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace parashift::test {

/// A fresh directory, removed with everything in it when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "parashift-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp failed for " + pattern);
    }
    path_ = pattern;
  }
  /// Only the process that made the directory removes it: a forked child
  /// that exits does not take its parent's files.
  ~TempDir() {
    if (::getpid() != owner_) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  /// A path for `name` inside the directory (the file is not created).
  [[nodiscard]] std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
  pid_t owner_ = ::getpid();
};

/// One directory for the whole test process, made on first use (thread-safe)
/// and removed at exit: where a test needs a scratch file or an hw run's
/// shm_root and no TempDir of its own.
inline const TempDir& process_temp_dir() {
  static const TempDir dir;
  return dir;
}

}  // namespace parashift::test
