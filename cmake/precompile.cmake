# Precompiled headers: the standard and third-party headers most files
# parse (Boost.Graph, yaml-cpp, nlohmann-json, Eigen: 3 s of a test file's
# 5.6 s front end with GCC 12) are compiled once per build instead of once
# per file (docs/hardening.md has the build times). Project headers stay
# out, so editing one rebuilds only the files that include it.
option(PARASHIFT_PCH "Precompile the standard and third-party headers" ON)

set(PARASHIFT_PCH_STD_HEADERS
  <algorithm> <array> <chrono> <cmath> <cstdint> <cstdio> <filesystem> <fstream>
  <functional> <limits> <map> <memory> <optional> <set> <span> <sstream> <stdexcept>
  <string> <utility> <variant> <vector>)

# parashift_precompile(TARGET [FROM OWNER] [BOOST_ONLY])
#   OWNER: reuse OWNER's precompiled header (GCC only: it checks the macros
#          the header uses and falls back to parsing it where they differ, so
#          OWNER must define a subset of TARGET's macros: parashift_core,
#          whose only definitions are Boost's, serves every target linking
#          it); clang builds (the fuzzers) precompile per target.
#   BOOST_ONLY: the standard headers and Boost.Graph (parashift_topo, which
#          links no other third-party library).
function(parashift_precompile target)
  if(NOT PARASHIFT_PCH)
    return()
  endif()
  cmake_parse_arguments(ARG "BOOST_ONLY" "FROM" "" ${ARGN})
  if(ARG_FROM AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_precompile_headers(${target} REUSE_FROM ${ARG_FROM})
    return()
  endif()
  set(headers ${PARASHIFT_PCH_STD_HEADERS} <boost/graph/adjacency_list.hpp>)
  if(NOT ARG_BOOST_ONLY)
    list(APPEND headers <Eigen/Dense> <nlohmann/json.hpp> <yaml-cpp/yaml.h>)
  endif()
  # hw's .cu files (nvcc) set SKIP_PRECOMPILE_HEADERS.
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
