// `peerlink coll --from-json` and `peerlink plan --check`: any bytes load as a saved run with a root among its ranks
// and a device per rank, or fail with Error(InvalidInput); what loads renders as text and HTML, and is read as the
// model's check reads a measured run (its topology, settings and recorded kernels), or fails alike.
#include <cstddef>
#include <cstdint>
#include <string>

#include "coll_format.hpp"
#include "coll_html.hpp"
#include "coll_json_read.hpp"
#include "core/json_io.hpp"
#include "peerlink/error.hpp"
#include "plan/cost_model.hpp"
#include "plan_runs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const peerlink::plan::CostModel model = peerlink::plan::builtInCostModel();
  try {
    const peerlink::cli::SavedColl saved =
        peerlink::cli::collFromJson(peerlink::parseJson(text, "fuzz.json"), "fuzz.json");
    const auto& run = saved.run;
    if (run.ranks < 1 || run.options.root >= run.ranks || run.devices.size() != static_cast<std::size_t>(run.ranks)) {
      __builtin_trap();
    }
    peerlink::cli::formatCollText(run);
    peerlink::cli::collRunsToHtml({saved});
    peerlink::cli::measuredRunFromJson(peerlink::parseJson(text, "fuzz.json"), "fuzz.json", model);
  } catch (const peerlink::Error& error) {
    if (error.code() != peerlink::ErrorCode::InvalidInput) __builtin_trap();
  }
  return 0;
}
