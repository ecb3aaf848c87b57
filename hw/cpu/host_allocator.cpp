#include "hw/cpu/host_allocator.hpp"

#include <malloc.h>

#include <mutex>

namespace parashift::hw {

void keep_freed_host_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest allowed on 64-bit
    mallopt(M_TRIM_THRESHOLD, -1);        // -1 is the largest size: never trim the heap top
  });
}

}  // namespace parashift::hw
