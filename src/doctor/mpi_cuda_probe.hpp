// The MPI's CUDA awareness from the MPI's own tools, without linking an MPI: Open MPI's `ompi_info
// --parsable --all` names the build's *_built_with_cuda_support parameter; MPICH's `mpichversion` lists
// its configure options, which say --with-cuda or --without-cuda when the builder chose. Anything else is
// unknown: the run-time answer is MPIX_Query_cuda_support() after MPI_Init, which only a program linked
// to that MPI can ask.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "peerlink/rdma_readiness.hpp"

namespace peerlink {

/// Reads `ompi_info --parsable --all` output: the implementation from "ompi:version:full:<v>", CUDA from
/// "mca:...:<prefix>_built_with_cuda_support:value:<true|false>".
MpiCudaSupport mpiCudaFromOmpiInfo(const std::string& parsable);

/// Reads `mpichversion` output: "<Name> Version: <v>" and "<Name> configure: <options>".
MpiCudaSupport mpiCudaFromMpichVersion(const std::string& text);

/// The tools looked for, in order: "ompi_info", "mpichversion".
const std::vector<std::string>& mpiTools();

/// Each MPI whose tool is found: run (bounded by `timeout`) when `savedOutputDir` is empty, else read from
/// <savedOutputDir>/<tool>.txt. A tool that fails or times out gives an entry with cudaAware unknown and
/// the reason as evidence.
std::vector<MpiCudaSupport> probeMpiCuda(std::chrono::milliseconds timeout, const std::string& savedOutputDir);

}  // namespace peerlink
