// PEERLINK_* value parsing: the first byte picks a declared parameter (or, past the registry, an undeclared
// name made of the rest), the rest is the value. Every value is accepted in a canonical form that parses to
// itself, or rejected with Error(InvalidUsage).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& registry = peerlink::paramRegistry();
  const std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t pick = data[0];
  try {
    if (pick < registry.size()) {
      const peerlink::ParamSpec& spec = registry[pick];
      const std::string canonical = peerlink::canonicalParamValue(spec, value);
      if (peerlink::canonicalParamValue(spec, canonical) != canonical) __builtin_trap();
      peerlink::Params params = peerlink::Params::fromMap({{spec.name, value}});
      if (spec.type == peerlink::ParamType::Int) params.getInt(spec.name);
      if (spec.type == peerlink::ParamType::List) params.getList(spec.name);
    } else {
      peerlink::Params::fromMap({{"PEERLINK_" + value, "1"}});  // an undeclared name: a "did you mean"
    }
  } catch (const peerlink::Error& error) {
    if (error.code() != peerlink::ErrorCode::InvalidUsage) __builtin_trap();
  }
  return 0;
}
