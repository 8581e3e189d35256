// The moesim binary: all of it lives in cli/ (the composition root); main stays tiny.
#include "cli/app.hpp"

int main(int argc, char** argv) { return moesim::cli::run(argc, argv); }
