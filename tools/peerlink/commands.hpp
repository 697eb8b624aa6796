// The subcommands. Each has an options struct filled by CLI11, a function that adds its flags to the
// app, and a function that runs it and returns an exit code (errors are thrown as peerlink::Error and
// turned into exit codes by cli.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "peerlink/params.hpp"

namespace peerlink::cli {

/// What every command gets: resolved parameters, the two output streams, and the command line (for the
/// metadata of JSON outputs).
struct Context {
  Params params;
  std::ostream& out;
  std::ostream& err;
  std::string commandLine;
  std::vector<std::string> arguments;  ///< argv, the program's path first (for `coll --procs` to start copies)
};

struct TopoOptions {
  std::string topoFile;  ///< --topo-file: load instead of discovering
  std::string jsonPath;  ///< --json: write the topology file ("-" = stdout)
};
CLI::App* addTopoCommand(CLI::App& app, TopoOptions& options);
int runTopo(const TopoOptions& options, Context& context);

struct BenchCommandOptions {
  bool list = false;                  ///< -l: list the cases and exit
  std::vector<std::string> names;     ///< -t
  std::vector<std::string> prefixes;  ///< -p
  std::string minBytes = "256M";      ///< -b
  std::string maxBytes;               ///< -e (default: -b)
  double factor = 2;                  ///< -f
  int iterations = 20;                ///< -n
  int warmup = 5;                     ///< -w
  bool noVerify = false;              ///< --no-verify
  std::vector<int> devices;           ///< -d
  std::string jsonPath;               ///< --json
  std::string csvPath;                ///< --csv
  std::string htmlPath;               ///< --html
  std::string fromJsonPath;           ///< --from-json: render a saved run instead of measuring
  double minBandwidth = 0;            ///< --min-bw
};
CLI::App* addBenchCommand(CLI::App& app, BenchCommandOptions& options);
int runBenchCommand(const BenchCommandOptions& options, Context& context);

/// `_share-export`: the hidden helper process of the cross-process benchmark cases and doctor probes
/// (transport/exporter_process.hpp).
struct ShareExportOptions {
  int device = 0;
  std::string busId;
  std::size_t bytes = 0;
  std::string kind = "ipc";
  std::uint64_t seed = 0;
  int timeoutMs = 10000;
};
CLI::App* addShareExportCommand(CLI::App& app, ShareExportOptions& options);
int runShareExportCommand(const ShareExportOptions& options, Context& context);

struct DoctorOptions {
  bool quick = false;                ///< --quick: capabilities and the functional probe only
  std::string jsonPath;              ///< --json: write the report ("-" = stdout)
  bool noCache = false;              ///< --no-cache: probe again; neither read nor write the verdict cache
  std::vector<int> devices;          ///< -d: only these GPUs (default all)
  std::string topoFile;              ///< --topo-file: refused (a saved topology cannot be probed)
  int timeoutMs = 2000;              ///< --timeout-ms: bound of every probe wait
  std::string helperVisibleDevices;  ///< --helper-visible-devices: CUDA_VISIBLE_DEVICES of the second process
  bool noCrossProcess = false;       ///< --no-cross-process: skip the ipc and cumem methods
  bool rdma = false;                 ///< --rdma: GPUDirect RDMA readiness only (no probes; runs without GPUs)
  std::string platformRoot;          ///< --platform-root (hidden): a fake machine's sys/, proc/, boot/, dev/, mpi/
};
CLI::App* addDoctorCommand(CLI::App& app, DoctorOptions& options);
int runDoctorCommand(const DoctorOptions& options, Context& context);

/// `peerlink coll`: collectives in nccl-tests' shape with NCCL's figures from the same run (coll_command.cc).
struct CollCommandOptions {
  std::string minBytes = "8";              ///< -b
  std::string maxBytes = "512M";           ///< -e
  double factor = 2;                       ///< -f
  int iterations = 20;                     ///< -n
  int warmup = 5;                          ///< -w
  int check = 1;                           ///< -c: 1 checks every configuration against a host reference
  int gpus = 0;                            ///< -g: GPUs 0..g-1 (0: all)
  std::string collective = "all_reduce";   ///< -o
  std::string datatype = "float";          ///< -d
  std::string op = "sum";                  ///< --op
  int root = 0;                            ///< -r
  bool noNccl = false;                     ///< --no-nccl
  bool ncclOnly = false;                   ///< --nccl-only
  std::string capture = "joined";          ///< --capture: joined | per-rank
  bool iterationTimes = false;             ///< --iteration-times: each eager iteration timed on its own too
  std::string jsonPath;                    ///< --json
  std::string htmlPath;                    ///< --html: the run as one offline HTML report
  std::vector<std::string> fromJsonPaths;  ///< --from-json: render saved runs instead of measuring
  bool explain = false;                    ///< --explain: print what would run at each size, measure nothing
  std::string topoFile;                    ///< --topo-file: the topology to explain for (no GPU needed)
  int procs = 0;                           ///< --procs N: run as N processes of one rank each (0: one process)
  bool registerBuffers = false;            ///< --register: peerlink's buffers registered as windows
};
CLI::App* addCollCommand(CLI::App& app, CollCommandOptions& options);
int runCollCommand(const CollCommandOptions& options, Context& context);

/// `peerlink place`: the best grouping of the GPUs and each rank's lines (place_command.cc).
struct PlaceOptions {
  std::optional<int> groupSize;  ///< -n: GPUs per group, every GPU placed
  std::string groups;            ///< --groups AxB: A groups of B GPUs
  std::string topoFile;          ///< --topo-file
  std::string jsonPath;          ///< --json
};
CLI::App* addPlaceCommand(CLI::App& app, PlaceOptions& options);
int runPlaceCommand(const PlaceOptions& options, Context& context);

/// `peerlink nccl-path`: where libpeerlink_nccl.so.2 is (nccl_path_command.cc).
struct NcclPathOptions {
  bool directory = false;  ///< --dir: the folder holding its libnccl.so.2 link, for LD_LIBRARY_PATH
};
CLI::App* addNcclPathCommand(CLI::App& app, NcclPathOptions& options);
int runNcclPathCommand(const NcclPathOptions& options, Context& context);

struct EnvOptions {
  bool json = false;  ///< --json: machine-readable list
  bool all = false;   ///< --all: the tuning and testing parameters too, not only users' and those set
};
CLI::App* addEnvCommand(CLI::App& app, EnvOptions& options);
int runEnv(const EnvOptions& options, Context& context);

}  // namespace peerlink::cli
