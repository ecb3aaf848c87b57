#include "hw/comm/deferred_sends.hpp"

#include <algorithm>

namespace parashift::hw {

std::size_t DeferredSends::queue(int peer, bool header) {
  sends_.push_back({next_id_, peer, header, false});
  return next_id_++;
}

std::vector<std::size_t> DeferredSends::take(bool headers_only) {
  std::vector<std::size_t> ids;
  std::vector<int> held;  // peers whose next queued send is a payload
  for (Send& s : sends_) {
    if (s.issued) continue;
    const bool blocked = std::find(held.begin(), held.end(), s.peer) != held.end();
    if (headers_only && (blocked || !s.header)) {
      if (!blocked) held.push_back(s.peer);
      continue;
    }
    s.issued = true;
    ids.push_back(s.id);
  }
  return ids;
}

void DeferredSends::forget_issued() {
  std::erase_if(sends_, [](const Send& s) { return s.issued; });
}

}  // namespace parashift::hw
