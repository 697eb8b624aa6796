#include "matrix_format.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.hpp"

namespace peerlink::cli {

std::string formatTable(const std::vector<std::string>& headersIn,
                        const std::vector<std::vector<std::string>>& rowsIn) {
  // Cells may hold text from outside (a GPU's name, a saved file): a terminal shows it, never obeys it.
  auto safe = [](const std::vector<std::string>& cells) {
    std::vector<std::string> out;
    for (const std::string& cell : cells) out.push_back(printable(cell, cell.size()));
    return out;
  };
  const std::vector<std::string> headers = safe(headersIn);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : rowsIn) rows.push_back(safe(row));
  std::vector<size_t> widths(headers.size(), 0);
  for (size_t c = 0; c < headers.size(); ++c) widths[c] = headers[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < cells.size() && c < widths.size(); ++c) {
      const bool last = c + 1 == cells.size();
      text += last ? cells[c] : fmt::format("{:<{}}  ", cells[c], widths[c]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text + "\n";
  };
  std::string out = line(headers);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string formatMatrix(const Matrix& matrix) {
  std::vector<std::string> headers = {""};
  for (int column = 0; column < matrix.size; ++column) headers.push_back(fmt::format("GPU{}", column));
  headers.insert(headers.end(), matrix.extraHeaders.begin(), matrix.extraHeaders.end());
  std::vector<std::vector<std::string>> rows;
  for (int row = 0; row < matrix.size; ++row) {
    std::vector<std::string> cells = {fmt::format("GPU{}", row)};
    for (int column = 0; column < matrix.size; ++column) {
      cells.push_back(row == column ? "X" : matrix.cell(row, column));
    }
    if (matrix.extraCells) {
      const std::vector<std::string> extra = matrix.extraCells(row);
      cells.insert(cells.end(), extra.begin(), extra.end());
    }
    rows.push_back(std::move(cells));
  }
  return matrix.title + "\n" + formatTable(headers, rows);
}

}  // namespace peerlink::cli
