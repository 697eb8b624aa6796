// MpiStartup (mpi_startup.hpp).
#include "net/mpi_startup.hpp"

#include <cstring>

#include "peerlink/error.hpp"

namespace peerlink::net {

std::vector<coll::MpiPlace> gatherMpiPlaces(Bootstrap& bootstrap, const coll::MpiPlace& mine) {
  const std::vector<std::uint8_t> all = bootstrap.allGather(&mine, sizeof mine);
  std::vector<coll::MpiPlace> places(static_cast<std::size_t>(bootstrap.size()));
  std::memcpy(places.data(), all.data(), places.size() * sizeof(coll::MpiPlace));
  return places;
}

MpiStartup::MpiStartup(Bootstrap& bootstrap, const Params& params, const std::string& what) : params_(params) {
  const auto refuse = [&](const std::string& problem) {
    if (!problem.empty()) throw Error(ErrorCode::InvalidUsage, what + ": " + problem);
  };
  // 1. The library on every rank, before any rank initializes MPI: MPI_Init_thread waits for every process of the job,
  // and a rank that could not load it would never come.
  std::string problem;
  try {
    facts_ = mpiFacts(params_);
    if (facts_.initialized) problem = mpiUnusableReason(facts_);  // the program's own MPI, below MPI_THREAD_MULTIPLE
  } catch (const std::exception& error) {
    problem = error.what();
  }
  refuse(coll::mpiUsabilityProblem(gatherMpiPlaces(bootstrap, coll::mpiPlaceOf(-1, 0, problem)), bootstrap.peers()));
  // 2. MPI initialized where it is not; then every rank's level and place, checked alike on every rank.
  if (!facts_.initialized) initializedHere_ = initializeMpiThreadMultiple(params_);
  facts_ = mpiFacts(params_);
  const coll::MpiPlace mine = coll::mpiPlaceOf(facts_.worldRank, facts_.worldSize, mpiUnusableReason(facts_));
  refuse(coll::mpiPlacementProblem(gatherMpiPlaces(bootstrap, mine), bootstrap.peers()));
}

void MpiStartup::finish() {
  if (!initializedHere_) return;
  initializedHere_ = false;
  finalizeMpi(params_);
}

}  // namespace peerlink::net
