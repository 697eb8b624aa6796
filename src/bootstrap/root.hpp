// The rendezvous root: a thread of the process that made the unique id, serving one world.
//
//   rank -> root   Hello               checked: token (else refused, that connection only), then world size,
//                                      peerlink version and rank against those who came first (else the
//                                      rendezvous fails for everyone, naming both ranks)
//   root -> ranks  World               once every rank arrived: every rank's hello (address, identity)
//                  | Forward           instead, where the root decides who serves the world (a ForwardIdSource)
//                                      and the ranks span hosts: every rank goes to the real NCCL with the id
//                                      the source gave; the rendezvous ends
//   rank -> root   Ready | Failure     connected to all its peers, or why it could not
//   root -> ranks  Go | Failure        every rank is ready; or the failure, the same line to every rank
//
// The root keeps the arrival bitmap: at its deadline (the timeout after the first rank arrived, or after its
// start when none did) every waiting rank receives "ranks 3, 7 of 8 never reached <address> within 30 s
// (arrived: 0-2, 4-6)". A rank whose connection closes before Go fails the rendezvous for all, named.
// After a failure the root answers later hellos with it until its deadline, then exits.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "bootstrap/hello.hpp"
#include "bootstrap/tcp.hpp"

namespace peerlink::bootstrap {

/// Slack between the root's deadlines and the ranks': a rank waits this long past its own deadline for the
/// root's verdict (so every rank prints the root's line rather than a guess of its own), and the root waits this
/// long past the ranks' deadline for connecting to each other before it gives up on them.
inline constexpr std::chrono::milliseconds kVerdictGrace{1000};

/// Asks the real NCCL for the id of a world this root sends there: the bytes of its ncclUniqueId (those past the
/// last non-zero one may be left out). Given by the NCCL API, which loaded the real library: the bootstrap does
/// not depend on NCCL. Called at most once, on the root's thread, in the process that made the id, after the call
/// that made it returned; it throws (any std::exception) naming why it cannot.
using ForwardIdSource = std::function<std::vector<std::uint8_t>()>;

/// Binds `bindAddress` (port 0: any) and starts the root of the world of `token`, which waits `timeout`.
/// Without `forwardId` the root sends every rank the world table. With it, the root decides who serves the world
/// once every rank arrived (chooseWorldServer, verdict.hpp), logged once: the world table for one host; for
/// several, a Forward frame to every rank carrying what `forwardId` gives, or a Failure naming why it gave nothing --
/// or, where some rank's hello says it cannot follow a forward, a Failure refusing the world (`forwardId` unasked).
/// Returns the address it listens on. Error(SystemError) naming the address when it cannot listen.
WireAddress startRoot(const SocketAddress& bindAddress, const Token& token, std::chrono::milliseconds timeout,
                      ForwardIdSource forwardId = nullptr);

/// How many roots this process runs now (tests check that a root exits).
int runningRoots();

/// Ends this process's root of `token` if no rank has reached it (an id made and then not used: the ranks of
/// ncclCommInitRankScalable meet at the first id's root only); a root some rank reached goes on. Whether this
/// process runs a root of `token`.
bool retireRoot(const Token& token);

}  // namespace peerlink::bootstrap
