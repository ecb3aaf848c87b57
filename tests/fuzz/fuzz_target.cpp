// One libFuzzer target per parser: built once per entry of parsers() with
// PARASHIFT_FUZZ_PARSER naming it. Refusing the input with core::InputError
// is the expected answer to bad input; any other exception escapes, aborts
// the run and is reported as a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/input_error.hpp"
#include "tests/fuzz/parsers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const parashift::fuzz::Parser& parser = parashift::fuzz::parser(PARASHIFT_FUZZ_PARSER);
  try {
    parser.parse(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const parashift::core::InputError&) {
    // refused with a message: what bad input must get
  }
  return 0;
}
