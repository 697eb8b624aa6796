// Text matrices for people: a title naming the direction, GPU(row) -> GPU(column), aligned columns.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace peerlink::cli {

/// A GPU x GPU matrix. `cell(row, column)` gives each off-diagonal cell; the diagonal shows "X".
/// `extraHeaders`/`extraCells(row)` append per-row columns (e.g. CPU affinity).
struct Matrix {
  std::string title;
  int size = 0;
  std::function<std::string(int row, int column)> cell;
  std::vector<std::string> extraHeaders;
  std::function<std::vector<std::string>(int row)> extraCells;
};

std::string formatMatrix(const Matrix& matrix);

/// Rows of cells as an aligned table with a header row (columns separated by two spaces).
std::string formatTable(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);

}  // namespace peerlink::cli
