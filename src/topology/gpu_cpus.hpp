// One GPU's local CPUs without discovering the whole topology: for threads and processes that bind themselves
// near their GPU before (or without) a topology (the bootstrap's watchdog, the `_share-export` helper).
#pragma once

#include <string>

namespace peerlink {

class Params;

/// The CPU list ("0-23,48-71") sysfs gives as local to CUDA device `device` (this process's ordinal): its
/// local_cpulist under PEERLINK_SYSFS_ROOT, found through the device's PCI bus id. "" when CUDA or sysfs cannot
/// tell (no such device, a VM hiding the file). Never throws.
std::string localCpusOfDevice(int device, const Params& params);

}  // namespace peerlink
