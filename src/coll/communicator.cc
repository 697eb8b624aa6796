// Placeholder so the library links while the communicator is being built; replaced by the real one.
#include "peerlink/communicator.hpp"

#include "peerlink/error.hpp"

namespace peerlink {

struct Communicator::State {};

Communicator::Communicator(const std::vector<int>& /*devices*/, Params /*params*/) {
  throw Error(ErrorCode::Unsupported, "peerlink::Communicator is not built yet");
}
Communicator::~Communicator() = default;

}  // namespace peerlink
