#include "hw/comm/communicator.hpp"

#include <string>

#include "hw/hw_error.hpp"

namespace parashift::hw {

void check_block(std::size_t block, std::size_t all, int ranks, const char* what) {
  if (all != block * static_cast<std::size_t>(ranks))
    throw HwError(std::string(what) + ": " + std::to_string(all) + " elements are not " +
                  std::to_string(ranks) + " blocks of " + std::to_string(block));
}

}  // namespace parashift::hw
