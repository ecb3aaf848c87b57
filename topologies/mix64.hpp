// splitmix64's finaliser (Steele, Lea and Flood, OOPSLA 2014): a cheap,
// well-mixed 64-bit hash, the same on every machine (unlike the standard
// library's distributions). The lowest library holds it so that routing
// (ECMP choice), the executor's synthetic values and the compressors'
// random starts share one definition.
#pragma once

#include <cstdint>

namespace parashift::topo {

inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace parashift::topo
