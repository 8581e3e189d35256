#pragma once
// Reads a validation file of published measurements (tests/validation/published.json, copied from
// ../shared/validation with every source kept) and turns each end-to-end training point into the
// scenario that reproduces it. Fields the publication left out are filled with stated assumptions.
#include <string>
#include <vector>

#include "record/published_point.hpp"

namespace moesim::config {

/// End-to-end points (tokens/s/GPU, step time, TFLOP/s/GPU, MFU), one per published run: when a
/// run is reported in several metrics, the one that needs no FLOP convention is kept
/// (tokens/s > step time > TFLOP/s > MFU). Microbenchmarks (busbw, GEMM rates) are not included.
/// `path` empty: the copy of tests/validation/published.json built into the binary (so an installed or
/// moved moesim needs no checkout); errors then name kBuiltinPublishedFile.
[[nodiscard]] std::vector<accuracy::PublishedPoint> load_published_points(const std::string& path);

/// The FNV-1a 64-bit hash (16 hex digits) of the same file's JSON in compact form: which data a fit
/// was made on, whatever its whitespace (record/fit.hpp).
[[nodiscard]] std::string published_fingerprint(const std::string& path);

/// The validation file built into the binary, as its errors and `moesim accuracy --help` name it.
inline constexpr const char* kBuiltinPublishedFile = "tests/validation/published.json";

}  // namespace moesim::config
