// `faults --svg`: a campaign's distributions, the in-memory snapshot policy
// against the remote-checkpoint baseline, as three stacked line plots by
// percentile: time lost (1 - ETTR) per seed, lost work per interruption, and
// recovery time per interruption. Worst cases on the right.
#pragma once

#include <ostream>

#include "sim/faults/campaign.hpp"

namespace parashift::tools {

void write_campaign_svg(std::ostream& out, const sim::CampaignResult& result,
                        const std::string& title);

}  // namespace parashift::tools
