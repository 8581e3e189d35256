#pragma once
namespace moesim::cli {
/// Parses the command line, runs the subcommand and maps errors to exit codes (README.md).
int run(int argc, char** argv);
}  // namespace moesim::cli
