// peerlink._native: the library's topology, doctor verdicts and errors for the `peerlink` Python package.
//
// Thin on purpose: each function calls one public C++ API and hands back plain Python values (dicts, lists,
// strings; the topology as the JSON text of docs/topology-format.md). The package's Python modules turn them
// into typed objects, and a peerlink::Error into the exception class of its code (peerlink/errors.py).
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "peerlink/doctor.hpp"
#include "peerlink/error.hpp"
#include "peerlink/params.hpp"
#include "peerlink/topology.hpp"
#include "peerlink/version.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace peerlink::python {
namespace {

// Raises the Python exception peerlink.errors makes for `error`'s code. Messages are UTF-8 as a rule; a byte
// that is not is kept visible (backslashreplace) rather than losing the message.
void raiseTyped(const Error& error) {
  const std::string text = error.what();
  PyObject* message = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  PyObject* module = message != nullptr ? PyImport_ImportModule("peerlink.errors") : nullptr;
  PyObject* exception = module != nullptr
                            ? PyObject_CallMethod(module, "_from_native", "iO", static_cast<int>(error.code()), message)
                            : nullptr;
  Py_XDECREF(module);
  Py_XDECREF(message);
  if (exception == nullptr) {
    // The package's own module is missing or broken: say so, and still give the message.
    PyErr_Clear();
    PyErr_Format(PyExc_RuntimeError, "peerlink error %s (peerlink.errors could not be imported): %s",
                 errorCodeName(error.code()), text.c_str());
    return;
  }
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception)), exception);
  Py_DECREF(exception);
}

nb::dict findingToDict(const Finding& finding) {
  nb::dict out;
  out["code"] = finding.code;
  out["severity"] = verdictName(finding.severity);
  out["summary"] = finding.summary;
  out["fix"] = finding.fix;
  out["gpus"] = finding.gpus;
  return out;
}

nb::dict pairToDict(const PairVerdict& pair) {
  nb::dict out;
  out["src"] = pair.src;
  out["dst"] = pair.dst;
  out["verdict"] = verdictName(pair.verdict);
  out["reasons"] = pair.reasons;
  return out;
}

nb::dict probeToDict(const ProbeResult& probe) {
  nb::dict out;
  out["src"] = probe.src;
  out["dst"] = probe.dst;
  out["method"] = probe.method;
  out["ran"] = probe.ran;
  out["timed_out"] = probe.timedOut;
  out["wrong_bytes"] = probe.wrongBytes;
  out["lost_bytes"] = probe.lostBytes;
  out["gbps"] = probe.gbps;
  out["error"] = probe.error;
  out["error_cause"] = probe.errorCause;
  out["seconds"] = probe.seconds;
  return out;
}

template <typename T, typename Convert>
nb::list listOf(const std::vector<T>& items, Convert convert) {
  nb::list out;
  for (const T& item : items) out.append(convert(item));
  return out;
}

// verifyPeers with the options `peerlink doctor` has (so both read and write the same cache entries). The
// probe runs without the GIL: it takes from milliseconds (every pair cached) to seconds.
nb::dict verifyPeersNative(const std::vector<int>& devices, bool quick, std::int64_t timeoutMs, bool useCache,
                           const std::string& helperExecutable,
                           const std::optional<std::string>& helperVisibleDevices) {
  Params params = Params::fromEnvironment();
  if (!useCache) params.set("PEERLINK_DOCTOR_CACHE", "off");
  VerifyOptions options;
  options.quick = quick;
  options.timeout = std::chrono::milliseconds(timeoutMs);
  options.helperExecutable = helperExecutable;
  options.helperVisibleDevices = helperVisibleDevices;
  VerifyResult result;
  {
    nb::gil_scoped_release unlocked;
    result = verifyPeers(devices, options, params);
  }
  nb::dict out;
  out["topology_json"] = topologyToJson(result.topology);
  out["overall"] = verdictName(result.report.overall);
  out["pairs"] = listOf(result.report.pairs, pairToDict);
  out["findings"] = listOf(result.report.findings, findingToDict);
  out["probes"] = listOf(result.probes, probeToDict);
  out["cached_pairs"] = result.cachedPairs;
  out["cache_directory"] = result.cacheDirectory;
  out["seconds"] = result.seconds;
  return out;
}

// This machine's topology as discoverTopology finds it (PEERLINK_TOPO_FILE included). Discovery asks CUDA, NVML
// and sysfs (tens of milliseconds), so other Python threads run meanwhile.
Topology discoverUnlocked(const Params& params) {
  nb::gil_scoped_release unlocked;
  return discoverTopology(params);
}

// The topology of `path`, or (none given) of this machine, as JSON text.
std::string topologyJson(const std::optional<std::string>& path) {
  if (path) return topologyToJson(loadTopologyFile(*path));
  return topologyToJson(discoverUnlocked(Params::fromEnvironment()));
}

// readCachedVerdicts for a topology given as JSON text (a Topology object's), or for this machine's.
nb::dict cachedVerdictsNative(const std::optional<std::string>& topologyText) {
  const Params params = Params::fromEnvironment();
  const Topology topology =
      topologyText ? topologyFromJson(*topologyText, "the topology given") : discoverUnlocked(params);
  const CachedVerdicts cached = readCachedVerdicts(topology, params);
  nb::dict out;
  out["topology_json"] = topologyToJson(topology);
  out["pairs"] = listOf(cached.pairs, pairToDict);
  out["directory"] = cached.directory;
  out["absence"] = cached.absence;
  return out;
}

// Every ErrorCode by its C++ name, so the package can check that it maps each one to a class.
nb::dict errorCodes() {
  nb::dict out;
  constexpr std::int64_t kLastValueTried = 255;  // peerlink_status_t is a small enum (0..11 today)
  for (std::int64_t value = 0; value <= kLastValueTried; ++value) {
    if (const std::optional<ErrorCode> code = errorCodeFromValue(value)) {
      out[errorCodeName(*code)] = static_cast<int>(*code);
    }
  }
  return out;
}

}  // namespace
}  // namespace peerlink::python

NB_MODULE(_native, module) {
  using namespace peerlink::python;
  module.doc() = "peerlink's native part; use the `peerlink` package, not this module.";
  nb::register_exception_translator([](const std::exception_ptr& thrown, void*) {
    try {
      std::rethrow_exception(thrown);
    } catch (const peerlink::Error& error) {
      raiseTyped(error);
    }
  });
  module.def("verify_peers", &verifyPeersNative, "devices"_a, "quick"_a, "timeout_ms"_a, "use_cache"_a,
             "helper_executable"_a, "helper_visible_devices"_a.none());
  module.def("topology_json", &topologyJson, "path"_a.none());
  module.def("cached_verdicts", &cachedVerdictsNative, "topology_json"_a.none());
  module.def("error_codes", &errorCodes);
  module.attr("version") = peerlink::kVersion;
  module.attr("git_commit") = peerlink::kGitCommit;
}
