// What this process is short of, for error messages: a CUDA or system call that fails with an unspecific
// error (out of memory, an operating-system error) often fails because the process ran out of file descriptors
// or address space, and the message should say so rather than leave the user to suspect the GPUs. The doctor's
// checks read the same facts into its snapshot (src/doctor/process_resources.cc) to name root causes.
#pragma once

#include <cstdint>
#include <string>

namespace peerlink {

/// Descriptors left below which the next socket, device file or exported memory handle may not open.
inline constexpr long kFewDescriptorsLeft = 16;
/// CUDA reserves address space for every GPU's memory and the host's when it starts (unified addressing), far
/// more than it touches: an address-space limit below this makes cuInit or the first allocations fail.
inline constexpr std::int64_t kCudaAddressSpaceBytes = std::int64_t{1} << 40;

/// "" when nothing is short; else "; this process ..." naming what is (file descriptors nearly all open under
/// RLIMIT_NOFILE, or an address-space limit, RLIMIT_AS, below what CUDA reserves) and what to do, to append to a
/// message. Reads /proc/self/fd and getrlimit; never throws.
std::string processShortageNote();

}  // namespace peerlink
