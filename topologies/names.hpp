// Vertex names the generators use: a one-letter prefix and an index ("g12").
#pragma once

#include <string>

namespace parashift::topo {

/// Built by appending: GCC 12 gives a false -Wrestrict for "g" + std::to_string(i).
inline std::string indexed_name(char prefix, int index) {
  std::string name(1, prefix);
  name += std::to_string(index);
  return name;
}

}  // namespace parashift::topo
