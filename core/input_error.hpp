// The user-input error tier (kept as its own header for its many throwers).
// The whole error model, with the environment and internal tiers, lives in
// core/errors.hpp; broken invariants use PARASHIFT_ASSERT (core/assert.hpp).
#pragma once

#include "core/errors.hpp"
