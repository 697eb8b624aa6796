// Asking the MPI's own tools whether it was built with CUDA.
#include "doctor/mpi_cuda_probe.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/text.hpp"
#include "doctor/bounded_command.hpp"

namespace peerlink {
namespace {

constexpr const char* kOmpiInfo = "ompi_info";
constexpr const char* kMpichVersion = "mpichversion";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) result.push_back(trimSpace(line));
  return result;
}

bool startsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// The whitespace-separated words of `text`, quotes removed (Open MPI and MPICH quote configure options).
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    std::string bare;
    for (char c : word) {
      if (c != '\'' && c != '"') bare += c;
    }
    result.push_back(bare);
  }
  return result;
}

}  // namespace

MpiCudaSupport mpiCudaFromOmpiInfo(const std::string& parsable) {
  MpiCudaSupport mpi;
  mpi.implementation = "Open MPI";
  mpi.tool = "ompi_info --parsable --all";
  const std::string versionKey = "ompi:version:full:";
  const std::string cudaKey = "_built_with_cuda_support:value:";
  for (const std::string& line : lines(parsable)) {
    if (startsWith(line, versionKey)) mpi.implementation = "Open MPI " + line.substr(versionKey.size());
    const std::size_t at = line.find(cudaKey);
    if (!startsWith(line, "mca:") || at == std::string::npos || mpi.cudaAware) continue;
    const std::string value = line.substr(at + cudaKey.size());
    if (value != "true" && value != "false") continue;
    mpi.cudaAware = value == "true";
    // "mca:opal:base:param:opal_built_with_cuda_support:value:false" -> "opal_built_with_cuda_support false"
    const std::size_t name = line.rfind(':', at) + 1;
    mpi.evidence = fmt::format("{}_built_with_cuda_support {}", line.substr(name, at - name), value);
  }
  if (!mpi.cudaAware) mpi.evidence = "ompi_info lists no *_built_with_cuda_support parameter";
  return mpi;
}

MpiCudaSupport mpiCudaFromMpichVersion(const std::string& text) {
  MpiCudaSupport mpi;
  mpi.implementation = "MPICH";
  mpi.tool = kMpichVersion;
  bool sawConfigure = false;
  for (const std::string& line : lines(text)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    const std::string value = trimSpace(line.substr(colon + 1));
    // "MPICH Version:", "MVAPICH2 Version:": the name is the key's first word.
    const std::size_t space = key.find(' ');
    if (space == std::string::npos) continue;
    const std::string field = key.substr(space + 1);
    if (field == "Version") mpi.implementation = key.substr(0, space) + " " + value;
    if (field != "configure") continue;
    sawConfigure = true;
    for (const std::string& option : words(value)) {
      if (option == "--without-cuda" || option == "--with-cuda=no") {
        mpi.cudaAware = false;
        mpi.evidence = "configured " + option;
      } else if (option == "--with-cuda" || startsWith(option, "--with-cuda=")) {
        mpi.cudaAware = true;
        mpi.evidence = "configured " + option;
      }
    }
  }
  if (!mpi.cudaAware) {
    mpi.evidence = sawConfigure ? "its configure options name no --with-cuda / --without-cuda (MPICH 4 looks for "
                                  "CUDA by itself, so their absence says nothing)"
                                : "mpichversion lists no configure options";
  }
  return mpi;
}

const std::vector<std::string>& mpiTools() {
  static const std::vector<std::string> kTools = {kOmpiInfo, kMpichVersion};
  return kTools;
}

std::vector<MpiCudaSupport> probeMpiCuda(std::chrono::milliseconds timeout, const std::string& savedOutputDir) {
  std::vector<MpiCudaSupport> found;
  for (const std::string& tool : mpiTools()) {
    std::string output;
    std::string problem;
    if (!savedOutputDir.empty()) {
      std::ifstream in(savedOutputDir + "/" + tool + ".txt", std::ios::binary);
      if (!in) continue;
      std::ostringstream text;
      text << in.rdbuf();
      output = text.str();
    } else {
      const std::vector<std::string> argv =
          tool == kOmpiInfo ? std::vector<std::string>{tool, "--parsable", "--all"} : std::vector<std::string>{tool};
      const CommandOutput run = runBoundedCommand(argv, timeout);
      if (!run.started) continue;
      output = run.out;
      if (!run.problem.empty()) {
        problem = run.problem;
      } else if (run.exitCode != 0) {
        problem = fmt::format("{} exited with status {}", tool, run.exitCode);
      }
    }
    MpiCudaSupport mpi = tool == kOmpiInfo ? mpiCudaFromOmpiInfo(output) : mpiCudaFromMpichVersion(output);
    // The tools' words reach the report and a terminal: printable, never obeyed.
    mpi.implementation = printable(mpi.implementation, 100);
    mpi.evidence = printable(mpi.evidence, 300);
    if (!problem.empty()) {
      mpi.cudaAware.reset();
      mpi.evidence = problem;
    }
    found.push_back(std::move(mpi));
  }
  return found;
}

}  // namespace peerlink
