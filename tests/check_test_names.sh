#!/bin/sh
# check_test_names.sh TESTS_DIR: ctest registers each doctest case by name
# (doctest_discover_tests), and CMake splits names at ';' into a list: a
# case named "a; b" is registered as "a", whose filter matches no case, so
# ctest reports it passed without running it. Fails naming every such case.
found=$(grep -rEn 'TEST_CASE[A-Z_]*\("[^"]*;' "$1")
if [ -n "$found" ]; then
  echo "test case names with ';' (ctest would not run them; use ',' instead):"
  echo "$found"
  exit 1
fi
echo "no test case name has a ';'"
