#include "core/nvml.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "core/fork_safe_mutex.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

// ---- NVML declarations ----------------------------------------------------------------------------
// Followed: nvml.h of NVML 12.2.140 (cuda-nvml-dev 12.2.140, the copy in NVIDIA/go-nvml
// pkg/nvml/nvml.h), checked against NCCL's src/include/nvmlwrap.h and the NVML API reference.
// go-nvml wraps the device handle in a one-pointer struct for cgo; nvml.h itself (and NCCL) use a plain
// pointer, which has the same ABI. C enums are int-sized, so they are declared as int here.
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlReturn_t = int;
using nvmlEnableState_t = int;
using nvmlIntNvLinkDeviceType_t = int;
using nvmlValueType_t = int;

constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;

constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;

constexpr nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_GPU = 0x00;
constexpr nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02;

constexpr nvmlValueType_t NVML_VALUE_TYPE_DOUBLE = 0;
constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_INT = 1;
constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
constexpr nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
constexpr nvmlValueType_t NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4;
constexpr nvmlValueType_t NVML_VALUE_TYPE_SIGNED_INT = 5;

constexpr unsigned int NVML_NVLINK_MAX_LINKS = 18;
constexpr unsigned int NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON = 90;  // "Common NVLink Speed in MBps for active links"
constexpr unsigned int NVML_FI_DEV_NVLINK_GET_SPEED = 164;         // "NVLink Speed in MBps", scopeId = link
constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;

// The layout the _v2/_v3 PCI calls fill. The original nvmlPciInfo_t (busId[16] first, four reserved words
// at the end) is what the unversioned nvmlDeviceGetPciInfo/nvmlDeviceGetNvLinkRemotePciInfo fill.
struct nvmlPciInfo_t {
  char busIdLegacy[16];  // "%04X:%02X:%02X.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;  // not filled by nvmlDeviceGetNvLinkRemotePciInfo_v2
  char busId[32];               // "%08X:%02X:%02X.0"
};
static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t layout");

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;  // link id for per-link fields; 0 otherwise
  long long timestamp;
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;  // per field; `value` is undefined unless NVML_SUCCESS
  nvmlValue_t value;
};
static_assert(sizeof(nvmlFieldValue_t) == 40 && offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t layout");

struct nvmlBAR1Memory_t {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
};

constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

std::string baseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/// "dddd:bb:dd.f" lower case from NVML's "00000000:BB:DD.F" (or any domain width); empty when malformed.
std::string normalizeBusId(const char* text) {
  unsigned int domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(text, "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) != 4) return "";
  if (bus > 0xff || device > 0x1f || function > 0x7) return "";
  char out[32];
  std::snprintf(out, sizeof(out), "%04x:%02x:%02x.%x", domain, bus, device, function);
  return out;
}

std::string busIdOf(const nvmlPciInfo_t& pci) {
  char raw[sizeof(pci.busId) + 1] = {};
  std::memcpy(raw, pci.busId, sizeof(pci.busId));
  std::string id = normalizeBusId(raw);
  if (id.empty()) {
    char out[32];
    std::snprintf(out, sizeof(out), "%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
    id = out;
  }
  return id;
}

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*nvmlInit_v2)() = nullptr;
  nvmlReturn_t (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*nvmlSystemGetDriverVersion)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCount_v2)(unsigned int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetUUID)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetName)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPciInfo_v3)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  // Optional: older drivers lack some; what they would tell stays unknown.
  nvmlReturn_t (*nvmlDeviceGetNvLinkState)(nvmlDevice_t, unsigned int, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetNvLinkVersion)(nvmlDevice_t, unsigned int, unsigned int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo_v2)(nvmlDevice_t, unsigned int, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetNvLinkRemoteDeviceType)(nvmlDevice_t, unsigned int, nvmlIntNvLinkDeviceType_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetFieldValues)(nvmlDevice_t, int, nvmlFieldValue_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMigMode)(nvmlDevice_t, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetBAR1MemoryInfo)(nvmlDevice_t, nvmlBAR1Memory_t*) = nullptr;

  std::vector<std::string> problems;

  /// "Unknown Error (999)"
  std::string describe(nvmlReturn_t rc) const {
    const char* text = nvmlErrorString ? nvmlErrorString(rc) : nullptr;
    return std::string(text ? text : "unknown NVML error") + " (" + std::to_string(rc) + ")";
  }
};

namespace {

/// Resolves `name` into `fn`. Returns the dlerror() line when it is absent.
template <typename Fn>
std::string resolve(void* handle, const char* name, Fn* fn) {
  dlerror();
  void* symbol = dlsym(handle, name);
  if (!symbol) {
    const char* error = dlerror();
    return error ? error : std::string(name) + " not found";
  }
  *fn = reinterpret_cast<Fn>(symbol);
  return "";
}

[[noreturn]] void throwNvml(const Nvml::Api& api, const char* call, nvmlReturn_t rc, const char* file, int line) {
  throw Error(ErrorCode::NvmlError, std::string(call) + " failed: " + api.describe(rc) + " at " + baseName(file) + ":" +
                                        std::to_string(line));
}

// Needs __FILE__/__LINE__; `fn` is the Api member, named exactly as the NVML function.
#define PEERLINK_NVML_CHECK(fn, ...)                                                               \
  do {                                                                                             \
    const nvmlReturn_t peerlinkNvmlRc = api_->fn(__VA_ARGS__);                                     \
    if (peerlinkNvmlRc != NVML_SUCCESS) throwNvml(*api_, #fn, peerlinkNvmlRc, __FILE__, __LINE__); \
  } while (0)

std::string queryFailed(const Nvml::Api& api, const char* call, int device, nvmlReturn_t rc) {
  return std::string(call) + "(device " + std::to_string(device) + ") failed: " + api.describe(rc);
}

std::string linkQueryFailed(const Nvml::Api& api, const char* call, int device, unsigned int link, nvmlReturn_t rc) {
  return std::string(call) + "(device " + std::to_string(device) + ", link " + std::to_string(link) +
         ") failed: " + api.describe(rc);
}

/// MB/s of a field value as a double; nullopt for a type NVML does not use for speeds.
std::optional<double> fieldNumber(const nvmlFieldValue_t& field) {
  switch (field.valueType) {
    case NVML_VALUE_TYPE_DOUBLE: return field.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT: return static_cast<double>(field.value.uiVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return static_cast<double>(field.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return static_cast<double>(field.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return static_cast<double>(field.value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT: return static_cast<double>(field.value.siVal);
  }
  return std::nullopt;
}

/// NVLink generation from nvmlDeviceGetNvLinkVersion. Current drivers answer an nvmlNvlinkVersion_t
/// (1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0, 8 = 6.0): H200 with 580.159.04 answers 6.
int nvlinkGeneration(unsigned int version) {
  static constexpr int kGeneration[] = {0, 1, 2, 2, 3, 3, 4, 5, 6};
  return version < sizeof(kGeneration) / sizeof(kGeneration[0]) ? kGeneration[version] : 0;
}

/// One existing link: state, and for an active link its version and remote end.
NvmlLink readLink(const Nvml::Api& api, nvmlDevice_t device, unsigned int l, bool active,
                  const std::set<std::string>& gpuBusIds, NvmlDeviceInfo& info, bool* inferred) {
  NvmlLink link;
  link.index = static_cast<int>(l);
  link.active = active;
  // An inactive link has no remote end; NVML fails the remaining queries for it.
  if (!active) return link;
  if (api.nvmlDeviceGetNvLinkVersion) {
    unsigned int version = 0;
    const nvmlReturn_t rc = api.nvmlDeviceGetNvLinkVersion(device, l, &version);
    if (rc == NVML_SUCCESS) {
      link.version = nvlinkGeneration(version);
      if (link.version == 0) {
        info.problems.push_back("nvmlDeviceGetNvLinkVersion(device " + std::to_string(info.index) + ", link " +
                                std::to_string(l) + ") answered unknown version " + std::to_string(version));
      }
    } else {
      info.problems.push_back(linkQueryFailed(api, "nvmlDeviceGetNvLinkVersion", info.index, l, rc));
    }
  }
  std::string remote;
  if (api.nvmlDeviceGetNvLinkRemotePciInfo_v2) {
    nvmlPciInfo_t pci{};
    const nvmlReturn_t rc = api.nvmlDeviceGetNvLinkRemotePciInfo_v2(device, l, &pci);
    if (rc == NVML_SUCCESS) {
      remote = busIdOf(pci);
    } else {
      info.problems.push_back(linkQueryFailed(api, "nvmlDeviceGetNvLinkRemotePciInfo_v2", info.index, l, rc));
      if (info.linkFailure.empty()) info.linkFailure = info.problems.back();
    }
  }
  // Hopper's NVSwitches are no PCI devices of this host: NVML gives FFFFFFFF:FF:FF.0 for them.
  const bool placeholder = remote == "ffffffff:ff:ff.0";
  if (!placeholder) link.remoteBusId = remote;
  bool typed = false;
  if (api.nvmlDeviceGetNvLinkRemoteDeviceType) {
    nvmlIntNvLinkDeviceType_t type = 0;
    const nvmlReturn_t rc = api.nvmlDeviceGetNvLinkRemoteDeviceType(device, l, &type);
    if (rc == NVML_SUCCESS) {
      typed = true;
      link.remoteIsGpu = type == NVML_NVLINK_DEVICE_TYPE_GPU;
      link.remoteIsSwitch = type == NVML_NVLINK_DEVICE_TYPE_SWITCH;
    } else {
      info.problems.push_back(linkQueryFailed(api, "nvmlDeviceGetNvLinkRemoteDeviceType", info.index, l, rc));
      if (remote.empty() && info.linkFailure.empty()) info.linkFailure = info.problems.back();
    }
  }
  if (!typed && !remote.empty()) {
    link.remoteIsGpu = !placeholder && gpuBusIds.count(remote) > 0;
    link.remoteIsSwitch = !link.remoteIsGpu;
    *inferred = true;
  }
  return link;
}

/// Speed in MB/s of one successful field; nullopt (and a problem) otherwise.
std::optional<double> fieldSpeed(const nvmlFieldValue_t& field, NvmlDeviceInfo& info) {
  std::optional<double> mbps = fieldNumber(field);
  if (!mbps) {
    info.problems.push_back("NVML field " + std::to_string(field.fieldId) + " of device " + std::to_string(info.index) +
                            " has value type " + std::to_string(field.valueType));
  }
  return mbps;
}

/// Per-link, per-direction NVLink rate. NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON answers NOT_SUPPORTED on
/// H200 (driver 580.159.04), where the per-link NVML_FI_DEV_NVLINK_GET_SPEED (scopeId = link) works.
void readLinkRate(const Nvml::Api& api, nvmlDevice_t device, NvmlDeviceInfo& info) {
  std::vector<nvmlFieldValue_t> fields(1);
  fields[0].fieldId = NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON;
  for (const NvmlLink& link : info.links) {
    if (!link.active) continue;
    nvmlFieldValue_t field{};
    field.fieldId = NVML_FI_DEV_NVLINK_GET_SPEED;
    field.scopeId = static_cast<unsigned int>(link.index);
    fields.push_back(field);
  }
  if (fields.size() == 1) return;  // no active link
  const nvmlReturn_t rc = api.nvmlDeviceGetFieldValues(device, static_cast<int>(fields.size()), fields.data());
  if (rc != NVML_SUCCESS) {
    info.problems.push_back(queryFailed(api, "nvmlDeviceGetFieldValues", info.index, rc));
    return;
  }
  std::optional<double> mbps;
  if (fields[0].nvmlReturn == NVML_SUCCESS) {
    mbps = fieldSpeed(fields[0], info);
  } else {
    std::set<double> speeds;
    for (size_t i = 1; i < fields.size(); ++i) {
      if (fields[i].nvmlReturn != NVML_SUCCESS) {
        info.problems.push_back(linkQueryFailed(api, "nvmlDeviceGetFieldValues(NVML_FI_DEV_NVLINK_GET_SPEED)",
                                                info.index, fields[i].scopeId, fields[i].nvmlReturn));
      } else if (std::optional<double> speed = fieldSpeed(fields[i], info)) {
        speeds.insert(*speed);
      }
    }
    if (speeds.size() > 1) {
      info.problems.push_back("active NVLinks of device " + std::to_string(info.index) +
                              " differ in speed; the slowest is taken");
    }
    if (!speeds.empty()) {
      mbps = *speeds.begin();
    } else {
      info.problems.push_back(queryFailed(api, "nvmlDeviceGetFieldValues(NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON)",
                                          info.index, fields[0].nvmlReturn));
    }
  }
  // NVML's MBps are 1e6 bytes/s per direction: H200 answers 26562, as nvidia-smi nvlink -s (26.562 GB/s).
  if (mbps) info.linkRateGBps = *mbps / 1000.0;
}

/// Fills info.links and linkRateGBps for one device. `gpuBusIds` are the bus ids of every NVML GPU.
void readLinks(const Nvml::Api& api, nvmlDevice_t device, const std::set<std::string>& gpuBusIds,
               NvmlDeviceInfo& info) {
  if (!api.nvmlDeviceGetNvLinkState) return;
  std::string inferred;  // links whose remote type was taken from the bus id
  for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; ++l) {
    nvmlEnableState_t state = 0;
    const nvmlReturn_t rc = api.nvmlDeviceGetNvLinkState(device, l, &state);
    // NVML answers NOT_SUPPORTED (no NVLink at all) or INVALID_ARGUMENT (beyond this GPU's links).
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) continue;
    if (rc != NVML_SUCCESS) {
      info.problems.push_back(linkQueryFailed(api, "nvmlDeviceGetNvLinkState", info.index, l, rc));
      if (info.linkFailure.empty()) info.linkFailure = info.problems.back();
      continue;
    }
    bool typeInferred = false;
    info.links.push_back(readLink(api, device, l, state == NVML_FEATURE_ENABLED, gpuBusIds, info, &typeInferred));
    if (typeInferred) inferred += (inferred.empty() ? "" : ",") + std::to_string(l);
  }
  if (!inferred.empty()) {
    info.problems.push_back("remote device type unknown for links " + inferred +
                            "; a remote end that is no NVML GPU was taken as an NVSwitch");
  }
  if (api.nvmlDeviceGetFieldValues) readLinkRate(api, device, info);
}

}  // namespace

std::unique_ptr<Nvml> Nvml::load(std::string* whyNot, const std::string& libraryPath) {
  auto fail = [&](const std::string& reason) {
    if (whyNot) *whyNot = "NVML not available: " + reason;
    return std::unique_ptr<Nvml>();
  };
  const std::string path = libraryPath.empty() ? kDefaultLibrary : libraryPath;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    return fail(error ? error : path + ": dlopen failed");
  }

  auto api = std::make_unique<Api>();
  std::string missing;
  auto require = [&](const char* name, auto* fn) {
    std::string error = resolve(handle, name, fn);
    if (!error.empty() && missing.empty()) missing = error;
  };
  auto optional = [&](const char* name, auto* fn) {
    if (!resolve(handle, name, fn).empty()) {
      api->problems.push_back(std::string(name) + " is not in " + path +
                              " (older driver); what it tells stays unknown");
    }
  };
  require("nvmlInit_v2", &api->nvmlInit_v2);
  require("nvmlShutdown", &api->nvmlShutdown);
  require("nvmlErrorString", &api->nvmlErrorString);
  require("nvmlSystemGetDriverVersion", &api->nvmlSystemGetDriverVersion);
  require("nvmlDeviceGetCount_v2", &api->nvmlDeviceGetCount_v2);
  require("nvmlDeviceGetHandleByIndex_v2", &api->nvmlDeviceGetHandleByIndex_v2);
  require("nvmlDeviceGetUUID", &api->nvmlDeviceGetUUID);
  require("nvmlDeviceGetName", &api->nvmlDeviceGetName);
  require("nvmlDeviceGetPciInfo_v3", &api->nvmlDeviceGetPciInfo_v3);
  optional("nvmlDeviceGetNvLinkState", &api->nvmlDeviceGetNvLinkState);
  optional("nvmlDeviceGetNvLinkVersion", &api->nvmlDeviceGetNvLinkVersion);
  optional("nvmlDeviceGetNvLinkRemotePciInfo_v2", &api->nvmlDeviceGetNvLinkRemotePciInfo_v2);
  optional("nvmlDeviceGetNvLinkRemoteDeviceType", &api->nvmlDeviceGetNvLinkRemoteDeviceType);
  optional("nvmlDeviceGetFieldValues", &api->nvmlDeviceGetFieldValues);
  optional("nvmlDeviceGetMigMode", &api->nvmlDeviceGetMigMode);
  optional("nvmlDeviceGetBAR1MemoryInfo", &api->nvmlDeviceGetBAR1MemoryInfo);
  if (!missing.empty()) {
    dlclose(handle);
    return fail(missing);
  }

  const nvmlReturn_t rc = api->nvmlInit_v2();
  if (rc != NVML_SUCCESS) {
    std::string reason = "nvmlInit_v2 failed: " + api->describe(rc);
    dlclose(handle);
    return fail(reason);
  }
  return std::unique_ptr<Nvml>(new Nvml(handle, std::move(api)));
}

const Nvml* Nvml::process(std::string* whyNot) {
  static auto* const mutex = new ForkSafeMutex;  // never destroyed, as the instance
  static Nvml* loaded = nullptr;                 // never destroyed: shutting NVML down at exit races exit handlers
  static pid_t loadedBy = 0;
  const std::lock_guard<ForkSafeMutex> lock(*mutex);
  // A forked child inherits the parent's instance, whose descriptors it shares: it loads its own.
  if (loaded == nullptr || loadedBy != ::getpid()) {
    std::unique_ptr<Nvml> nvml = load(whyNot);
    if (!nvml) return nullptr;
    loaded = nvml.release();
    loadedBy = ::getpid();
  }
  return loaded;
}

Nvml::Nvml(void* handle, std::unique_ptr<Api> api) : handle_(handle), api_(std::move(api)) {}

Nvml::~Nvml() {
  if (api_ && api_->nvmlShutdown) api_->nvmlShutdown();
  if (handle_) dlclose(handle_);
}

namespace {

// MIG mode and the BAR1 aperture. NOT_SUPPORTED is the normal answer of GPUs without MIG, not a problem.
void readMigAndBar1(const Nvml::Api& api, nvmlDevice_t handle, NvmlDeviceInfo& info) {
  if (api.nvmlDeviceGetMigMode != nullptr) {
    unsigned int current = 0;
    unsigned int pending = 0;
    const nvmlReturn_t rc = api.nvmlDeviceGetMigMode(handle, &current, &pending);
    if (rc == NVML_SUCCESS) {
      info.migMode = current != 0 ? 1 : 0;
    } else if (rc != NVML_ERROR_NOT_SUPPORTED) {
      info.problems.push_back(queryFailed(api, "nvmlDeviceGetMigMode", info.index, rc));
    }
  }
  if (api.nvmlDeviceGetBAR1MemoryInfo != nullptr) {
    nvmlBAR1Memory_t bar1{};
    const nvmlReturn_t rc = api.nvmlDeviceGetBAR1MemoryInfo(handle, &bar1);
    if (rc == NVML_SUCCESS) {
      info.bar1Bytes = bar1.bar1Total;
    } else if (rc != NVML_ERROR_NOT_SUPPORTED) {
      info.problems.push_back(queryFailed(api, "nvmlDeviceGetBAR1MemoryInfo", info.index, rc));
    }
  }
}

}  // namespace

const std::vector<std::string>& Nvml::problems() const {
  return api_->problems;
}

std::string Nvml::driverVersion() const {
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  PEERLINK_NVML_CHECK(nvmlSystemGetDriverVersion, version, sizeof(version));
  version[sizeof(version) - 1] = '\0';
  return version;
}

std::vector<NvmlDeviceInfo> Nvml::devices() const {
  unsigned int count = 0;
  PEERLINK_NVML_CHECK(nvmlDeviceGetCount_v2, &count);
  std::vector<NvmlDeviceInfo> infos(count);
  std::vector<nvmlDevice_t> handles(count, nullptr);
  std::set<std::string> gpuBusIds;
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDeviceInfo& info = infos[i];
    info.index = static_cast<int>(i);
    nvmlReturn_t rc = api_->nvmlDeviceGetHandleByIndex_v2(i, &handles[i]);
    if (rc != NVML_SUCCESS) {
      handles[i] = nullptr;
      info.problems.push_back(queryFailed(*api_, "nvmlDeviceGetHandleByIndex_v2", info.index, rc));
      continue;
    }
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    rc = api_->nvmlDeviceGetUUID(handles[i], uuid, sizeof(uuid));
    if (rc == NVML_SUCCESS) {
      uuid[sizeof(uuid) - 1] = '\0';
      info.uuid = uuid;
    } else {
      info.problems.push_back(queryFailed(*api_, "nvmlDeviceGetUUID", info.index, rc));
    }
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    rc = api_->nvmlDeviceGetName(handles[i], name, sizeof(name));
    if (rc == NVML_SUCCESS) {
      name[sizeof(name) - 1] = '\0';
      info.name = name;
    } else {
      info.problems.push_back(queryFailed(*api_, "nvmlDeviceGetName", info.index, rc));
    }
    nvmlPciInfo_t pci{};
    rc = api_->nvmlDeviceGetPciInfo_v3(handles[i], &pci);
    if (rc == NVML_SUCCESS) {
      info.pciBusId = busIdOf(pci);
      gpuBusIds.insert(info.pciBusId);
    } else {
      info.problems.push_back(queryFailed(*api_, "nvmlDeviceGetPciInfo_v3", info.index, rc));
    }
  }
  for (unsigned int i = 0; i < count; ++i) {
    if (!handles[i]) continue;
    readLinks(*api_, handles[i], gpuBusIds, infos[i]);
    readMigAndBar1(*api_, handles[i], infos[i]);
  }
  return infos;
}

}  // namespace peerlink
