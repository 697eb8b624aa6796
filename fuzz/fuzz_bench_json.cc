// `peerlink bench --from-json`: any bytes load as a saved run whose every cell names GPUs of its topology, or
// fail with Error(InvalidInput); what loads renders as text, CSV and HTML (where a cell's GPU index of 2^31-1
// once wrote out of bounds).
#include <cstddef>
#include <cstdint>
#include <string>

#include "bench_csv.hpp"
#include "bench_format.hpp"
#include "bench_html.hpp"
#include "bench_json_read.hpp"
#include "core/json_io.hpp"
#include "peerlink/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const peerlink::cli::SavedBench saved =
        peerlink::cli::benchFromJson(peerlink::parseJson(text, "fuzz.json"), "fuzz.json");
    const auto gpus = static_cast<int>(saved.topology.gpus.size());
    for (const peerlink::BenchCaseResult& result : saved.results) {
      for (const peerlink::BenchCell& cell : result.cells) {
        if (cell.src >= gpus || cell.dst >= gpus || cell.via >= gpus || cell.src < -1 || cell.dst < -1) {
          __builtin_trap();
        }
      }
    }
    peerlink::cli::formatBenchText(saved.topology, saved.results);
    peerlink::cli::benchToCsv(saved.results);
    peerlink::cli::benchToHtml(saved.topology, saved.results, saved.generatedBy);
  } catch (const peerlink::Error& error) {
    if (error.code() != peerlink::ErrorCode::InvalidInput) __builtin_trap();
  }
  return 0;
}
