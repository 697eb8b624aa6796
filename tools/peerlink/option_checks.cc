#include "option_checks.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

namespace peerlink::cli {

CLI::Validator inputPathOption() {
  return CLI::Validator(
      [](std::string& value) -> std::string { return value.empty() ? "the file name is empty" : std::string(); },
      "FILE");
}

CLI::Validator outputPathOption() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (value.empty()) return "the file name is empty (use '-' for standard output)";
        if (value == "/dev/stdout" || value == "/dev/fd/1" || value == "/proc/self/fd/1") value = "-";
        return {};
      },
      "FILE");
}

CLI::Validator finiteNonNegative() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        char* end = nullptr;
        const double number = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !std::isfinite(number) || number < 0) {
          return "'" + value + "' is not a number >= 0";
        }
        return {};
      },
      "NUMBER >= 0");
}

}  // namespace peerlink::cli
