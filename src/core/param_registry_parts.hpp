// The registry's parts (param_registry.cc), each a group of parameters in documentation order.
#pragma once

#include <vector>

#include "peerlink/params.hpp"

namespace peerlink {

/// The collectives' and the communicator's parameters (PEERLINK_ALGO ... PEERLINK_COLL_*), param_registry_coll.cc.
std::vector<ParamSpec> collectiveParamSpecs();

}  // namespace peerlink
