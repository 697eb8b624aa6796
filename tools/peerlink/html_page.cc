// The HTML reports' shared page (html_page.hpp).
#include "html_page.hpp"

#include <fmt/format.h>

#include "core/json_io.hpp"

#include "svg_chart.hpp"

namespace peerlink::cli {
namespace {

constexpr const char* kStyle = R"(
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;font-size:14px;line-height:1.4;color:#1a1a1a;
  max-width:1320px;margin:20px auto;padding:0 16px}
h1{font-size:24px;margin:0 0 8px}
h2{font-size:19px;margin:30px 0 4px;padding-bottom:3px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px}
th,td{border:1px solid #d0d0d0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.meta th,table.meta td{border:none;background:none;padding:1px 16px 1px 0}
table.meta th{color:#555;font-weight:normal}
.failed{background:#d62728;color:#fff;font-weight:bold}
.low{outline:3px solid #ff7f0e;outline-offset:-3px}
.eff{font-size:11px;color:#555}
.na{color:#666;font-style:italic}
.desc{margin:2px 0 8px;color:#333}
.maps{display:flex;flex-wrap:wrap;gap:16px 28px;align-items:flex-start}
.legend{font-size:12px;color:#333;margin:2px 0 10px}
.legend .item{white-space:nowrap;margin-right:18px;display:inline-block}
.sw{display:inline-block;width:14px;height:12px;vertical-align:middle;border:1px solid #999}
.sw.ramp{width:90px;background:linear-gradient(to right,#f7fbff,#6baed6,#08306b)}
.sw.red{background:#d62728}.sw.flag{border:3px solid #ff7f0e;width:10px;height:8px}.sw.self{background:#e4e4e4}
ul.problems{max-height:11em;overflow:auto;font-family:"DejaVu Sans Mono",monospace;font-size:12px;
  background:#fff5f5;border:1px solid #f0c0c0;padding:6px 6px 6px 26px}
code{font-family:"DejaVu Sans Mono",monospace}
td.ahead{background:#e5f5e0}td.behind{background:#fde0dd}
footer{margin-top:36px;font-size:12px;color:#666}
)";

}  // namespace

std::string metaText(const nlohmann::json& generatedBy, const char* key) {
  if (!generatedBy.is_object() || !generatedBy.contains(key)) return "?";
  const nlohmann::json& value = generatedBy.at(key);
  return value.is_string() ? value.get<std::string>() : jsonExcerpt(value);  // a saved file's: any JSON value
}

MetaRows runMetaRows(const nlohmann::json& generatedBy) {
  return {{"tool", metaText(generatedBy, "tool") + " " + metaText(generatedBy, "version")},
          {"git commit", metaText(generatedBy, "git_commit")},
          {"date (UTC)", metaText(generatedBy, "date")},
          {"host", metaText(generatedBy, "host")},
          {"command", metaText(generatedBy, "command")}};
}

std::string metaTable(const MetaRows& rows) {
  std::string out = "<table class=\"meta\">";
  for (const auto& [name, value] : rows) {
    out += "<tr><th>" + escapeHtml(name) + "</th><td>" + escapeHtml(value) + "</td></tr>";
  }
  return out + "</table>\n";
}

std::string htmlPageStart(const std::string& title) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + escapeHtml(title) + "</title>\n";
  return out + std::string("<style>") + kStyle + "</style>\n</head>\n<body>\n";
}

std::string htmlPageEnd(const nlohmann::json& generatedBy) {
  return fmt::format(
             "<footer>Written by peerlink {} (commit {}). One offline file: no scripts, nothing fetched.</footer>\n",
             escapeHtml(metaText(generatedBy, "version")), escapeHtml(metaText(generatedBy, "git_commit"))) +
         "</body>\n</html>\n";
}

}  // namespace peerlink::cli
