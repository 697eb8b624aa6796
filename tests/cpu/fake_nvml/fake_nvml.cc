// A stand-in for libnvidia-ml.so.1 so Nvml can be tested without a GPU: the C functions peerlink uses,
// answering for a 2-GPU NVLink box. Types follow nvml.h of NVML 12.2.140, declared here on their own so
// a mistake in src/core/nvml.cc is not copied into its test.
//
//   GPU 0  00000000:18:00.0  links 0-1 -> GPU 1, links 2-3 -> NVSwitch 00000000:C0:00.0 (an A100 box's
//                            switches are PCI devices)
//   GPU 1  00000000:2A:00.0  links 0-1 -> GPU 0, link 2 -> NVSwitch FFFFFFFF:FF:FF.0 (what Hopper's
//                            switches answer), link 3 inactive
//   every link NVLink 4.0 (nvmlNvlinkVersion_t 6) at 26562 MB/s per direction; links 4-17 do not exist
//   (INVALID_ARGUMENT). GPU 0 answers NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON; GPU 1, like an H200 with
//   driver 580, only the per-link NVML_FI_DEV_NVLINK_GET_SPEED.
//   nvmlDeviceGetNvLinkVersion(GPU 1, link 1) fails with NVML_ERROR_UNKNOWN
//   MIG: GPU 0 answers NOT_SUPPORTED (no MIG), GPU 1 has MIG enabled. BAR1: GPU 0 64 GiB, GPU 1 256 MiB.
//
// FAKE_NVML_FAIL_INIT=1 makes nvmlInit_v2 fail with NVML_ERROR_DRIVER_NOT_LOADED,
// FAKE_NVML_FAIL_DRIVER_VERSION=1 nvmlSystemGetDriverVersion with NVML_ERROR_UNKNOWN. Built with
// FAKE_NVML_OLD_DRIVER it lacks nvmlDeviceGetNvLinkRemoteDeviceType, as drivers before R450 do.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

struct PciInfo {  // nvmlPciInfo_t as the _v2/_v3 calls fill it
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

struct FieldValue {  // nvmlFieldValue_t
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  union {
    double dVal;
    unsigned int uiVal;
    unsigned long long ullVal;
  } value;
};

constexpr int kLinkCount = 4;
constexpr unsigned int kFieldSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
constexpr unsigned int kFieldLinkSpeed = 164;   // NVML_FI_DEV_NVLINK_GET_SPEED, scopeId = link
constexpr int kValueTypeUnsignedInt = 1;
constexpr int kValueTypeUnsignedLongLong = 3;
constexpr unsigned int kSpeedMBps = 26562;
constexpr unsigned int kNvlinkVersion4 = 6;  // NVML_NVLINK_VERSION_4_0
constexpr int kTypeGpu = 0;
constexpr int kTypeSwitch = 2;

struct Link {
  bool active;
  int remote;  // GPU index, or -1 for the NVSwitch
};

constexpr unsigned int kPlaceholderBus = ~0u;  // the remote end has no PCI identity

struct Gpu {
  const char* uuid;
  const char* name;
  unsigned int bus;
  Link links[kLinkCount];
};

}  // namespace

// nvmlDevice_t is `struct nvmlDevice_st*`; here it points at a Gpu.
struct nvmlDevice_st {
  Gpu gpu;
};
using nvmlDevice_t = nvmlDevice_st*;

namespace {

nvmlDevice_st gGpus[2] = {
    {{"GPU-0b4a2c6e-1f3d-4e5a-8b7c-000000000000",
      "NVIDIA H100 80GB HBM3",
      0x18,
      {{true, 1}, {true, 1}, {true, -1}, {true, -1}}}},
    {{"GPU-0b4a2c6e-1f3d-4e5a-8b7c-111111111111",
      "NVIDIA H100 80GB HBM3",
      0x2A,
      {{true, 0}, {true, 0}, {true, -1}, {false, -1}}}},
};
constexpr unsigned int kSwitchBus = 0xC0;

unsigned int remoteBus(int gpu, unsigned int link, const Link& l) {
  if (l.remote >= 0) return gGpus[l.remote].gpu.bus;
  return gpu == 1 && link == 2 ? kPlaceholderBus : kSwitchBus;
}
int gInitCount = 0;

bool envIsOne(const char* name) {
  const char* value = std::getenv(name);
  return value && std::strcmp(value, "1") == 0;
}

int indexOf(nvmlDevice_t device) {
  for (int i = 0; i < 2; ++i) {
    if (device == &gGpus[i]) return i;
  }
  return -1;
}

nvmlReturn_t copyString(const char* text, char* out, unsigned int length) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (std::strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::strcpy(out, text);
  return NVML_SUCCESS;
}

void fillPci(unsigned int bus, PciInfo* pci) {
  std::memset(pci, 0, sizeof(*pci));
  if (bus == kPlaceholderBus) {
    pci->domain = 0xFFFFFFFF;
    pci->bus = 0xFF;
    pci->device = 0xFF;
  } else {
    pci->bus = bus;
    pci->pciDeviceId = 0x233010de;
  }
  // NVML prints bus ids in upper case with an 8-digit domain (NVML_DEVICE_PCI_BUS_ID_FMT).
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0", pci->domain & 0xFFFF, pci->bus & 0xFF,
                pci->device & 0x1F);
  std::snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
}

/// The link of `device`, or the NVML error for a bad device or link index.
nvmlReturn_t findLink(nvmlDevice_t device, unsigned int link, const Link** out) {
  if (gInitCount == 0) return NVML_ERROR_UNINITIALIZED;
  if (indexOf(device) < 0 || link >= kLinkCount) return NVML_ERROR_INVALID_ARGUMENT;
  *out = &device->gpu.links[link];
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
  if (envIsOne("FAKE_NVML_FAIL_INIT")) return NVML_ERROR_DRIVER_NOT_LOADED;
  ++gInitCount;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown() {
  if (gInitCount == 0) return NVML_ERROR_UNINITIALIZED;
  --gInitCount;
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (gInitCount == 0) return NVML_ERROR_UNINITIALIZED;
  if (envIsOne("FAKE_NVML_FAIL_DRIVER_VERSION")) return NVML_ERROR_UNKNOWN;
  return copyString("580.159.04", version, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (gInitCount == 0) return NVML_ERROR_UNINITIALIZED;
  *count = 2;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (gInitCount == 0) return NVML_ERROR_UNINITIALIZED;
  if (index >= 2 || !device) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &gGpus[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  if (indexOf(device) < 0) return NVML_ERROR_INVALID_ARGUMENT;
  return copyString(device->gpu.uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  if (indexOf(device) < 0) return NVML_ERROR_INVALID_ARGUMENT;
  return copyString(device->gpu.name, name, length);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, PciInfo* pci) {
  if (indexOf(device) < 0 || !pci) return NVML_ERROR_INVALID_ARGUMENT;
  fillPci(device->gpu.bus, pci);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int* isActive) {
  const Link* l = nullptr;
  const nvmlReturn_t rc = findLink(device, link, &l);
  if (rc == NVML_SUCCESS) *isActive = l->active ? 1 : 0;
  return rc;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link, unsigned int* version) {
  const Link* l = nullptr;
  const nvmlReturn_t rc = findLink(device, link, &l);
  if (rc != NVML_SUCCESS) return rc;
  if (indexOf(device) == 1 && link == 1) return NVML_ERROR_UNKNOWN;
  *version = kNvlinkVersion4;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, PciInfo* pci) {
  const Link* l = nullptr;
  const nvmlReturn_t rc = findLink(device, link, &l);
  if (rc != NVML_SUCCESS) return rc;
  if (!l->active) return NVML_ERROR_NOT_SUPPORTED;
  fillPci(remoteBus(indexOf(device), link, *l), pci);
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, int* type) {
  const Link* l = nullptr;
  const nvmlReturn_t rc = findLink(device, link, &l);
  if (rc != NVML_SUCCESS) return rc;
  if (!l->active) return NVML_ERROR_NOT_SUPPORTED;
  *type = l->remote < 0 ? kTypeSwitch : kTypeGpu;
  return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, FieldValue* values) {
  if (gInitCount == 0) return NVML_ERROR_UNINITIALIZED;
  if (indexOf(device) < 0 || valuesCount < 0 || !values) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < valuesCount; ++i) {
    FieldValue& field = values[i];
    field.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    if (field.fieldId == kFieldSpeedCommon && indexOf(device) == 0) {
      field.valueType = kValueTypeUnsignedInt;
      field.value.ullVal = 0;
      field.value.uiVal = kSpeedMBps;
      field.nvmlReturn = NVML_SUCCESS;
    } else if (field.fieldId == kFieldLinkSpeed && field.scopeId < kLinkCount &&
               device->gpu.links[field.scopeId].active) {
      field.valueType = kValueTypeUnsignedLongLong;
      field.value.ullVal = kSpeedMBps;
      field.nvmlReturn = NVML_SUCCESS;
    }
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  if (gInitCount == 0) return NVML_ERROR_UNINITIALIZED;
  if (indexOf(device) < 0 || !current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  if (indexOf(device) == 0) return NVML_ERROR_NOT_SUPPORTED;
  *current = 1;
  *pending = 1;
  return NVML_SUCCESS;
}

struct Bar1Memory {  // nvmlBAR1Memory_t
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
};

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, Bar1Memory* bar1) {
  if (gInitCount == 0) return NVML_ERROR_UNINITIALIZED;
  if (indexOf(device) < 0 || !bar1) return NVML_ERROR_INVALID_ARGUMENT;
  bar1->bar1Total = indexOf(device) == 0 ? (64ull << 30) : (256ull << 20);
  bar1->bar1Free = bar1->bar1Total;
  bar1->bar1Used = 0;
  return NVML_SUCCESS;
}

/// Not NVML: how many nvmlInit_v2 calls have no nvmlShutdown yet, so tests can check the RAII.
int fakeNvmlInitCount() {
  return gInitCount;
}

}  // extern "C"
