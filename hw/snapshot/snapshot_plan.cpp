#include "hw/snapshot/snapshot_plan.hpp"

#include <fstream>

#include "hw/hw_error.hpp"
#include "hw/snapshot/shard_store.hpp"

namespace parashift::hw {

std::filesystem::path snapshot_plan_path(const std::filesystem::path& root,
                                         const std::string& job) {
  return ShardStore::job_dir(root, job) / "plan.set";
}

void write_snapshot_plan(const std::filesystem::path& root, const std::string& job,
                         const std::vector<std::string>& overrides) {
  const auto path = snapshot_plan_path(root, job);
  std::filesystem::create_directories(path.parent_path());
  const auto temp = std::filesystem::path(path.string() + ".tmp");
  {
    std::ofstream out(temp, std::ios::trunc);
    for (const auto& line : overrides) out << line << '\n';
    if (!out) throw HwError("cannot write " + temp.string());
  }
  std::filesystem::rename(temp, path);
}

std::vector<std::string> read_snapshot_plan(const std::filesystem::path& root,
                                            const std::string& job) {
  std::ifstream in(snapshot_plan_path(root, job));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace parashift::hw
