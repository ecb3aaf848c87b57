#include <iostream>

#include "tools/cli/command.hpp"

int main(int argc, char** argv) {
  return parashift::tools::run_cli(argc, argv, std::cout, std::cerr);
}
