// The mutation check of every shipped scenario: each field of each file in
// scenarios/ is deleted, retyped, negated, zeroed and inflated, one change
// at a time, and `parashift simulate` runs on the result in its own process.
// Each run must end with exit 0, or exit 2 and one "parashift: error:" line,
// within the time limit: never a crash, an internal error or a hang.
//
//   scenario_mutation PARASHIFT SCENARIO_DIR MAX_RUNS TIMEOUT_S
//
// When there are more mutations than MAX_RUNS, every k-th of the sorted list
// runs (k = ceil(total / MAX_RUNS)), so the sample is the same on every run.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace fs = std::filesystem;

namespace {

enum class Change { Delete, Retype, Negate, Zero, Inflate };
constexpr Change kChanges[] = {Change::Delete, Change::Retype, Change::Negate, Change::Zero,
                               Change::Inflate};

const char* name_of(Change c) {
  switch (c) {
    case Change::Delete:
      return "delete";
    case Change::Retype:
      return "retype";
    case Change::Negate:
      return "negate";
    case Change::Zero:
      return "zero";
    case Change::Inflate:
      return "inflate";
  }
  return "?";
}

using Path = std::vector<std::string>;  // map keys, or sequence indices as text

struct Mutation {
  fs::path file;
  Path path;
  Change change;
};

std::string dotted(const Path& path) {
  std::string out;
  for (const auto& p : path) out += (out.empty() ? "" : ".") + p;
  return out;
}

// Every node below the root (maps and sequences too: deleting or retyping a
// whole section is a mutation of its own).
void collect(const YAML::Node& node, Path& at, std::vector<Path>& out) {
  if (!at.empty()) out.push_back(at);
  if (node.IsMap()) {
    for (const auto& kv : node) {
      at.push_back(kv.first.as<std::string>());
      collect(kv.second, at, out);
      at.pop_back();
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      at.push_back(std::to_string(i));
      collect(node[i], at, out);
      at.pop_back();
    }
  }
}

YAML::Node changed_value(const YAML::Node& old, Change change) {
  const std::string text = old.IsScalar() ? old.Scalar() : "";
  double number = 0;
  bool numeric = false;
  if (old.IsScalar()) {
    std::istringstream in(text);
    numeric = static_cast<bool>(in >> number) && in.eof();
  }
  switch (change) {
    case Change::Retype:  // a scalar becomes a list; a section becomes a word
      if (old.IsScalar()) {
        YAML::Node list(YAML::NodeType::Sequence);
        list.push_back(old);
        return list;
      }
      return YAML::Node("retyped");
    case Change::Negate:
      return numeric ? YAML::Node(-number) : YAML::Node("-" + text);
    case Change::Zero:
      return YAML::Node(0);
    case Change::Inflate: {
      if (numeric) return YAML::Node(number == 0 ? 1e18 : number * 1e6);
      std::string big;
      for (int i = 0; i < 64; ++i) big += text.empty() ? "x" : text;
      return YAML::Node(big);
    }
    case Change::Delete:
      break;
  }
  return YAML::Node();
}

// Applies `change` at `path` in a deep copy of `doc`.
YAML::Node mutated(const YAML::Node& doc, const Path& path, Change change) {
  YAML::Node root = YAML::Clone(doc);
  YAML::Node parent;
  parent.reset(root);
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    YAML::Node next = parent.IsSequence() ? parent[std::stoul(path[i])] : parent[path[i]];
    parent.reset(next);
  }
  const std::string& key = path.back();
  if (parent.IsSequence()) {
    const std::size_t index = std::stoul(key);
    if (change == Change::Delete) {
      YAML::Node rest(YAML::NodeType::Sequence);
      for (std::size_t i = 0; i < parent.size(); ++i) {
        if (i != index) rest.push_back(parent[i]);
      }
      parent = rest;
    } else {
      parent[index] = changed_value(parent[index], change);
    }
  } else if (change == Change::Delete) {
    parent.remove(key);
  } else {
    parent[key] = changed_value(parent[key], change);
  }
  return root;
}

// Relative topology paths point next to the original file.
YAML::Node with_absolute_paths(YAML::Node doc, const fs::path& dir) {
  YAML::Node topology = doc["cluster"]["topology"];
  if (topology && topology.IsScalar()) {
    const fs::path p = topology.Scalar();
    if (p.is_relative()) doc["cluster"]["topology"] = (dir / p).lexically_normal().string();
  }
  return doc;
}

struct Outcome {
  int status = -1;  // exit status, or -signal, or -1000 for a hang
  std::string err;
};

Outcome run(const std::string& parashift, const fs::path& scenario, const fs::path& err_file,
            int timeout_s) {
  std::cout.flush();  // the child must not inherit (and print again) what is buffered
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* out = std::freopen("/dev/null", "w", stdout);
    std::FILE* err = std::freopen(err_file.c_str(), "w", stderr);
    if (out == nullptr || err == nullptr) ::_exit(127);
    ::execl(parashift.c_str(), parashift.c_str(), "simulate", scenario.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  Outcome o;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &wstatus, 0);
      o.status = -1000;
      return o;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  o.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -WTERMSIG(wstatus);
  std::ifstream in(err_file);
  std::ostringstream text;
  text << in.rdbuf();
  o.err = text.str();
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: scenario_mutation PARASHIFT SCENARIO_DIR MAX_RUNS TIMEOUT_S\n";
    return 2;
  }
  const std::string parashift = argv[1];
  const fs::path scenarios = argv[2];
  const long max_runs = std::max(1L, std::atol(argv[3]));
  const int timeout_s = std::max(1, std::atoi(argv[4]));

  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(scenarios)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Mutation> all;
  for (const auto& file : files) {
    std::vector<Path> paths;
    Path at;
    collect(YAML::LoadFile(file.string()), at, paths);
    for (const auto& path : paths) {
      for (Change c : kChanges) all.push_back({file, path, c});
    }
  }
  const std::size_t step =
      (all.size() + static_cast<std::size_t>(max_runs) - 1) / static_cast<std::size_t>(max_runs);

  std::string dir_pattern = (fs::temp_directory_path() / "parashift-mutation-XXXXXX").string();
  if (::mkdtemp(dir_pattern.data()) == nullptr) {
    std::cerr << "scenario_mutation: mkdtemp failed\n";
    return 1;
  }
  const fs::path dir = dir_pattern;
  int runs = 0, ok = 0, refused = 0, bad = 0;
  for (std::size_t i = 0; i < all.size(); i += step) {
    const Mutation& m = all[i];
    const YAML::Node doc =
        with_absolute_paths(YAML::LoadFile(m.file.string()), m.file.parent_path());
    const fs::path scenario = dir / m.file.filename();
    {
      YAML::Emitter emit;
      emit << mutated(doc, m.path, m.change);
      std::ofstream(scenario) << emit.c_str() << "\n";
    }
    const Outcome o = run(parashift, scenario, dir / "stderr.txt", timeout_s);
    ++runs;
    const bool one_line = std::count(o.err.begin(), o.err.end(), '\n') == 1 &&
                          o.err.rfind("parashift: error: ", 0) == 0;
    if (o.status == 0) {
      ++ok;
    } else if (o.status == 2 && one_line) {
      ++refused;
    } else {
      ++bad;
      std::cout << "FAIL " << m.file.filename().string() << " " << dotted(m.path) << " "
                << name_of(m.change) << ": "
                << (o.status == -1000 ? "no exit within " + std::to_string(timeout_s) + " s"
                                      : "status " + std::to_string(o.status))
                << (o.err.empty() ? "" : ", stderr: " + o.err.substr(0, 300)) << "\n";
    }
  }
  fs::remove_all(dir);
  std::cout << "scenario_mutation: " << all.size() << " mutations of " << files.size()
            << " scenarios, ran every " << step << ": " << runs << " runs, " << ok << " exit 0, "
            << refused << " exit 2 with one line, " << bad << " failed\n";
  return bad == 0 ? 0 : 1;
}
