// Launchers' environments: detectLaunch from each launcher's variables (as captured from torchrun, Open MPI's
// mpirun, MPICH's Hydra and srun), the rendezvous each calls for, and worlds joined without an id passed:
// through the private id file on one machine, and at a well-known address.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bootstrap/tcp.hpp"
#include "bootstrap_test_support.hpp"
#include "peerlink/launch.hpp"

namespace peerlink {
namespace {

using namespace std::chrono_literals;
using namespace ::peerlink::testing;
using Variables = std::map<std::string, std::string>;

// detectLaunch's message for variables it must refuse.
std::string errorText(const Variables& variables) {
  return errorOf(ErrorCode::InvalidUsage, [&] { detectLaunch(variables); });
}

void expectLaunch(const LaunchEnvironment& launch, Launcher launcher, int rank, int size, std::optional<int> localRank,
                  std::optional<int> localSize, const std::string& jobKey) {
  EXPECT_EQ(launch.launcher, launcher);
  EXPECT_EQ(launch.rank, rank);
  EXPECT_EQ(launch.size, size);
  EXPECT_EQ(launch.localRank, localRank);
  EXPECT_EQ(launch.localSize, localSize);
  EXPECT_EQ(launch.jobKey, jobKey);
}

TEST(DetectLaunch, NoLauncherIsASingleProcess) {
  const LaunchEnvironment launch = detectLaunch({{"HOME", "/root"}});
  EXPECT_EQ(launch.launcher, Launcher::None);
  EXPECT_EQ(launch.rank, 0);
  EXPECT_EQ(launch.size, 1);
  EXPECT_STREQ(launcherName(launch.launcher), "none");
}

TEST(DetectLaunch, Torchrun) {
  // As torchrun --nproc-per-node 4 (static rendezvous) sets them for its third worker.
  const LaunchEnvironment launch = detectLaunch({{"RANK", "2"},
                                                 {"WORLD_SIZE", "4"},
                                                 {"LOCAL_RANK", "2"},
                                                 {"LOCAL_WORLD_SIZE", "4"},
                                                 {"MASTER_ADDR", "127.0.0.1"},
                                                 {"MASTER_PORT", "29500"},
                                                 {"TORCHELASTIC_RUN_ID", "none"},
                                                 {"TORCHELASTIC_RESTART_COUNT", "0"},
                                                 {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  expectLaunch(launch, Launcher::Torchrun, 2, 4, 2, 4, "torchrun:none:127.0.0.1:29500:0");
  EXPECT_EQ(launch.masterAddr, "127.0.0.1");
  EXPECT_EQ(launch.masterPort, 29500);
  EXPECT_TRUE(launch.masterPortTaken);
  EXPECT_EQ(launch.source, "RANK=2");
}

TEST(DetectLaunch, OpenMpi) {
  // What Open MPI 4.1's mpirun -np 2 sets for rank 1 (captured on this machine).
  const LaunchEnvironment launch = detectLaunch({{"OMPI_COMM_WORLD_RANK", "1"},
                                                 {"OMPI_COMM_WORLD_SIZE", "2"},
                                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                                 {"OMPI_MCA_ess_base_jobid", "1452670977"},
                                                 {"PMIX_NAMESPACE", "1452670977"},
                                                 {"PMIX_RANK", "1"}});
  expectLaunch(launch, Launcher::OpenMpi, 1, 2, 1, 2, "ompi:1452670977");
  EXPECT_FALSE(launch.masterPort.has_value());
}

TEST(DetectLaunch, PmiGivesNoJobKey) {
  // MPICH's Hydra: rank, size and local numbering, but no job id.
  const LaunchEnvironment launch = detectLaunch(
      {{"PMI_RANK", "3"}, {"PMI_SIZE", "8"}, {"MPI_LOCALRANKID", "3"}, {"MPI_LOCALNRANKS", "4"}, {"PMI_FD", "6"}});
  expectLaunch(launch, Launcher::Pmi, 3, 8, 3, 4, "");
  // Cray PALS names its PMI local variables differently, and its application id keys the job.
  const LaunchEnvironment pals = detectLaunch(
      {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"PMI_LOCAL_RANK", "1"}, {"PMI_LOCAL_SIZE", "2"}, {"PALS_APID", "ab12"}});
  expectLaunch(pals, Launcher::Pmi, 1, 2, 1, 2, "pmi:ab12");
}

TEST(DetectLaunch, SlurmStep) {
  // srun -N 4 -n 7 places 2, 2, 2, 1 tasks; this is the last node's task.
  const LaunchEnvironment launch = detectLaunch({{"SLURM_PROCID", "6"},
                                                 {"SLURM_NTASKS", "7"},
                                                 {"SLURM_STEP_NUM_TASKS", "7"},
                                                 {"SLURM_LOCALID", "0"},
                                                 {"SLURM_NODEID", "3"},
                                                 {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"},
                                                 {"SLURM_JOB_ID", "200505"},
                                                 {"SLURM_STEP_ID", "0"}});
  expectLaunch(launch, Launcher::Slurm, 6, 7, 0, 1, "slurm:200505:0");
  Variables second = {{"SLURM_PROCID", "3"},
                      {"SLURM_NTASKS", "7"},
                      {"SLURM_LOCALID", "1"},
                      {"SLURM_NODEID", "1"},
                      {"SLURM_TASKS_PER_NODE", "2(x3),1"},
                      {"SLURM_JOB_ID", "9"},
                      {"SLURM_STEPID", "2"}};
  expectLaunch(detectLaunch(second), Launcher::Slurm, 3, 7, 1, 2, "slurm:9:2");
}

TEST(DetectLaunch, AnSbatchScriptIsNotARank) {
  // The batch script's own shell has SLURM_PROCID and SLURM_NTASKS but is no step's task.
  const LaunchEnvironment launch =
      detectLaunch({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}, {"SLURM_JOB_ID", "200505"}});
  EXPECT_EQ(launch.launcher, Launcher::None);
}

TEST(DetectLaunch, TheInnermostLauncherWins) {
  // torchrun under srun: torchrun's ranks, not Slurm's task (one agent per node).
  Variables both = {{"RANK", "5"},         {"WORLD_SIZE", "8"},    {"SLURM_PROCID", "1"},
                    {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}, {"SLURM_JOB_ID", "1"}};
  EXPECT_EQ(detectLaunch(both).launcher, Launcher::Torchrun);
  EXPECT_EQ(detectLaunch(both).rank, 5);
  // Open MPI's mpirun inside an allocation: Open MPI's.
  Variables ompi = {{"OMPI_COMM_WORLD_RANK", "3"},
                    {"OMPI_COMM_WORLD_SIZE", "4"},
                    {"SLURM_PROCID", "0"},
                    {"SLURM_NTASKS", "1"},
                    {"SLURM_STEP_ID", "0"}};
  EXPECT_EQ(detectLaunch(ompi).launcher, Launcher::OpenMpi);
}

TEST(DetectLaunch, MalformedValuesAreNamed) {
  EXPECT_EQ(errorText({{"RANK", "1"}}), "RANK is set but WORLD_SIZE is not: a launcher sets both");
  EXPECT_EQ(errorText({{"WORLD_SIZE", "2"}}), "WORLD_SIZE is set but RANK is not: a launcher sets both");
  EXPECT_EQ(errorText({{"RANK", "one"}, {"WORLD_SIZE", "2"}}),
            "RANK='one' is not valid: expected an integer of at least 0");
  EXPECT_EQ(errorText({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), "RANK=2 is outside WORLD_SIZE=2");
  EXPECT_EQ(errorText({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
            "WORLD_SIZE='0' is not valid: expected an integer of at least 1");
  EXPECT_EQ(errorText({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}}),
            "local rank 2 is outside the local size 2 (LOCAL_RANK, LOCAL_WORLD_SIZE)");
  EXPECT_EQ(errorText({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "3"}}),
            "3 ranks on this machine but 2 in the world (LOCAL_WORLD_SIZE)");
  EXPECT_EQ(errorText({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}),
            "MASTER_PORT=70000 is not a port");
  EXPECT_EQ(errorText({{"OMPI_COMM_WORLD_RANK", "-1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
            "OMPI_COMM_WORLD_RANK='-1' is not valid: expected an integer of at least 0");
  EXPECT_EQ(errorText({{"SLURM_PROCID", "0"},
                       {"SLURM_NTASKS", "4"},
                       {"SLURM_STEP_ID", "0"},
                       {"SLURM_NODEID", "0"},
                       {"SLURM_LOCALID", "3"},
                       {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}}),
            "SLURM_LOCALID=3 is outside this node's 2 tasks (SLURM_STEP_TASKS_PER_NODE=2(x2))");
}

LaunchEnvironment launched(int rank, int size, std::optional<int> localSize) {
  LaunchEnvironment launch;
  launch.launcher = Launcher::OpenMpi;
  launch.rank = rank;
  launch.size = size;
  launch.localSize = localSize;
  launch.jobKey = "ompi:42";
  return launch;
}

TEST(LaunchRendezvousChoice, OneMachineUsesTheFileElseAnAddress) {
  LaunchRendezvous choice = chooseLaunchRendezvous(launched(0, 4, 4), "");
  EXPECT_EQ(choice.kind, LaunchRendezvous::Kind::File);
  EXPECT_EQ(choice.reason, "all 4 ranks are on this machine (Open MPI)");

  choice = chooseLaunchRendezvous(launched(0, 4, 4), "10.0.0.1:29400");
  EXPECT_EQ(choice.kind, LaunchRendezvous::Kind::Address);
  EXPECT_EQ(choice.address, "10.0.0.1:29400");
  // An address without a port only says where a root of this machine listens.
  EXPECT_EQ(chooseLaunchRendezvous(launched(0, 4, 4), "10.0.0.1").kind, LaunchRendezvous::Kind::File);

  LaunchEnvironment torch = launched(1, 8, 4);
  torch.launcher = Launcher::Torchrun;
  torch.masterAddr = "node-a";
  torch.masterPort = 29500;
  choice = chooseLaunchRendezvous(torch, "");
  EXPECT_EQ(choice.kind, LaunchRendezvous::Kind::Address);
  EXPECT_EQ(choice.address, "node-a:29500");
  torch.masterPortTaken = true;
  EXPECT_EQ(chooseLaunchRendezvous(torch, "").address, "node-a:29501");
  torch.masterAddr = "fd00::1";
  EXPECT_EQ(chooseLaunchRendezvous(torch, "").address, "[fd00::1]:29501");

  EXPECT_EQ(errorOf(ErrorCode::InvalidUsage, [] { chooseLaunchRendezvous(launched(0, 8, 4), ""); }),
            "Open MPI started 8 ranks, 4 on this machine and gave no rendezvous address: set MASTER_ADDR and "
            "MASTER_PORT, or PEERLINK_BOOTSTRAP_ADDR=host:port (an address of the machine of rank 0)");
}

class LaunchWorld : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/peerlink-launch-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    directory_ = name;
  }
  void TearDown() override {
    EXPECT_TRUE(rootsEndWithin(5s));
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
  // What connectLaunchBootstrap with a 300 ms deadline throws, which must be an Error(code).
  std::string failedLaunch(ErrorCode code, const LaunchEnvironment& launch) const {
    LaunchBootstrapOptions options;
    options.bootstrap = optionsWith(300ms);
    options.directory = directory_;
    return errorOf(code, [&] { connectLaunchBootstrap(launch, Params(), options); });
  }
  std::string privateDirectory() const { return fmt::format("{}/peerlink-bootstrap-{}", directory_, ::geteuid()); }
  std::vector<std::string> filesIn(const std::string& path) const {
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(path.c_str())) {
      while (const dirent* entry = ::readdir(dir)) {
        if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0)
          names.push_back(entry->d_name);
      }
      ::closedir(dir);
    }
    return names;
  }

  std::string directory_;
};

// A rank as a launcher starts it: its environment, no id. Rank 0 starts a moment late in `lateRoot`.
ProcessWorld::Body launchedRank(LaunchEnvironment launch, Params params, std::string directory, bool lateRoot) {
  return [=](const UniqueId&, const Reporter& reporter) {
    if (lateRoot && launch.rank == 0) std::this_thread::sleep_for(300ms);
    LaunchBootstrapOptions options;
    options.bootstrap = optionsWith(5000ms);
    options.directory = directory;
    auto bootstrap = connectLaunchBootstrap(launch, params, options);
    const int value = bootstrap->rank() * 10;
    const std::vector<std::uint8_t> all = bootstrap->allGather(&value, sizeof(value));
    std::vector<int> values(static_cast<std::size_t>(bootstrap->size()));
    std::memcpy(values.data(), all.data(), all.size());
    for (int rank = 0; rank < bootstrap->size(); ++rank) {
      if (values[static_cast<std::size_t>(rank)] != rank * 10) return kChildWrongResult;
    }
    reporter.say("ok");
    return kChildOk;
  };
}

TEST_F(LaunchWorld, OneMachineMeetsThroughThePrivateFile) {
  ProcessWorld world;
  const std::string key = fmt::format("ompi:test-{}", ::getpid());
  for (int rank = 0; rank < 3; ++rank) {
    LaunchEnvironment launch = launched(rank, 3, 3);
    launch.jobKey = key;
    world.spawn(launchedRank(launch, Params(), directory_, true));  // the others wait for rank 0's file
  }
  world.start(UniqueId{});
  for (const auto& outcome : world.finish()) {
    EXPECT_EQ(outcome.exitCode, kChildOk);
    EXPECT_EQ(outcome.report, "ok");
  }
  struct stat status {};
  ASSERT_EQ(::lstat(privateDirectory().c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0700u);
  EXPECT_TRUE(filesIn(privateDirectory()).empty());  // rank 0 removed the id once everyone had it
}

TEST_F(LaunchWorld, ADirectoryOthersCanEnterIsRefused) {
  ASSERT_EQ(::mkdir(privateDirectory().c_str(), 0755), 0);
  EXPECT_TRUE(contains(failedLaunch(ErrorCode::SystemError, launched(1, 2, 2)),
                       "with mode 0755; peerlink needs a directory of uid"));
}

TEST_F(LaunchWorld, RankZeroMissingIsNamedWithTheFile) {
  EXPECT_TRUE(contains(failedLaunch(ErrorCode::Timeout, launched(1, 2, 2)),
                       "rank 1 found no bootstrap id from rank 0 at " + privateDirectory() + "/job-"));
  EXPECT_TRUE(contains(failedLaunch(ErrorCode::InvalidUsage, LaunchEnvironment{}), "no launcher's variables"));
}

TEST_F(LaunchWorld, MachinesMeetAtTheMasterAddress) {
  const bootstrap::SocketAddress bound = freeLoopbackPort();  // rank 0's root binds it
  ProcessWorld world;
  for (int rank = 0; rank < 3; ++rank) {
    LaunchEnvironment launch;
    launch.launcher = Launcher::Torchrun;
    launch.rank = rank;
    launch.size = 3;  // local size unknown: an address is needed
    launch.masterAddr = "127.0.0.1";
    launch.masterPort = bound.port();
    launch.jobKey = fmt::format("torchrun:test-{}", ::getpid());
    world.spawn(launchedRank(launch, Params(), directory_, true));  // the others retry until rank 0 listens
  }
  world.start(UniqueId{});
  for (const auto& outcome : world.finish()) {
    EXPECT_EQ(outcome.exitCode, kChildOk);
    EXPECT_EQ(outcome.report, "ok");
  }
}

}  // namespace
}  // namespace peerlink
