#include "hw/exec/comm_groups.hpp"

#include <string>

#include "hw/hw_error.hpp"

namespace parashift::hw {

int dp_color(const core::ParallelPlan& plan, const core::RankCoord& coord) {
  return coord.tp + plan.tp * (coord.cp + plan.cp * coord.pp);
}

CommGroups make_comm_groups(Communicator& world, const core::ParallelPlan& plan) {
  const core::RankLayout layout(plan);
  CommGroups g;
  g.coord = layout.coord(world.rank());
  const auto& c = g.coord;
  // Colour = the coordinates the group shares; key = the one it spans.
  g.tp = world.split(c.cp + plan.cp * (c.dp + plan.dp * c.pp), c.tp);
  g.pp = world.split(c.tp + plan.tp * (c.cp + plan.cp * c.dp), c.pp);
  g.dp = world.split(dp_color(plan, c), c.dp);
  if (g.tp->size() != plan.tp || g.pp->size() != plan.pp || g.dp->size() != plan.dp ||
      g.tp->rank() != c.tp || g.pp->rank() != c.pp || g.dp->rank() != c.dp)
    throw HwError("communication groups of rank " + std::to_string(world.rank()) +
                  " do not match plan " + plan.label());
  return g;
}

}  // namespace parashift::hw
