#!/usr/bin/env bash
# CI: the other precision configuration -- long double as a plain double, as on macOS arm64 and MSVC
# -- must be REFUSED with a message naming long double, never built (docs/precision.md).
# On x86-64 GCC/Clang it is simulated with -mlong-double-64 (CMake option PPK_LONG_DOUBLE_64):
#   1. the header cpp/include/ppk/real.hpp alone fails to compile (its static_assert) with the flag,
#      and compiles without it (so the failure is the precision check, not a broken header);
#   2. `cmake -DPPK_LONG_DOUBLE_64=ON` and `CXXFLAGS=-mlong-double-64 cmake` stop at configure time with
#      the message (needs cmake on PATH; skipped with a note otherwise);
#   3. a plain configure still succeeds (needs pybind11 importable by `python`; skipped otherwise).
# Exit 0 when every check that could run saw the expected outcome, 1 otherwise.  ~10 s.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expected="ppk needs long double with >= 64 mantissa bits"
cxx=${CXX:-c++}
fail=0

if [ "$(uname -m)" != "x86_64" ]; then
  echo "other_precision: SKIPPED (-mlong-double-64 simulates the refused configuration on x86-64 only)"
  exit 0
fi

# 1. the header's static_assert
printf '#include "ppk/real.hpp"\nint main() { return 0; }\n' >"$tmp/probe.cpp"
if ! "$cxx" -std=c++17 -fsyntax-only -I cpp/include "$tmp/probe.cpp" 2>"$tmp/plain.log"; then
  echo "other_precision: FAIL: ppk/real.hpp does not compile with the default long double:"; cat "$tmp/plain.log"
  fail=1
fi
if "$cxx" -std=c++17 -fsyntax-only -mlong-double-64 -I cpp/include "$tmp/probe.cpp" 2>"$tmp/header.log"; then
  echo "other_precision: FAIL: ppk/real.hpp compiled with -mlong-double-64 (no refusal)"
  fail=1
elif grep -q "$expected" "$tmp/header.log"; then
  echo "other_precision: ok: the compiler refuses ppk/real.hpp with -mlong-double-64:"
  grep -m1 "$expected" "$tmp/header.log" | sed 's/^/    /'
else
  echo "other_precision: FAIL: ppk/real.hpp failed with -mlong-double-64 but without the message:"; cat "$tmp/header.log"
  fail=1
fi

# 2. configure-time refusal
if ! command -v cmake >/dev/null; then
  echo "other_precision: cmake not on PATH: configure checks skipped"
  exit $fail
fi
pybind_dir=$(python -m pybind11 --cmakedir 2>/dev/null || true)
pyargs=()
[ -n "$pybind_dir" ] && pyargs=("-Dpybind11_DIR=$pybind_dir")
refused() {   # refused <label> <log>: configure failed; check its message
  if grep -q "$expected" "$2"; then
    echo "other_precision: ok: $1 refused at configure time:"
    sed -n '/CMake Error/,/Call Stack/p' "$2" | grep -v "Call Stack" | sed 's/^/    /'
  else
    echo "other_precision: FAIL: $1 failed at configure time without the message:"; cat "$2"
    fail=1
  fi
}
if cmake -S "$root" -B "$tmp/build-ld64" "${pyargs[@]}" -DPPK_LONG_DOUBLE_64=ON >"$tmp/ld64.log" 2>&1; then
  echo "other_precision: FAIL: cmake -DPPK_LONG_DOUBLE_64=ON configured (no refusal)"; fail=1
else
  refused "cmake -DPPK_LONG_DOUBLE_64=ON" "$tmp/ld64.log"
fi
if CXXFLAGS="${CXXFLAGS:-} -mlong-double-64" cmake -S "$root" -B "$tmp/build-cxxflags" "${pyargs[@]}" \
    >"$tmp/cxxflags.log" 2>&1; then
  echo "other_precision: FAIL: CXXFLAGS=-mlong-double-64 cmake configured (no refusal)"; fail=1
else
  refused "CXXFLAGS=-mlong-double-64 cmake" "$tmp/cxxflags.log"
fi

# 3. the default configuration still configures
if [ -z "$pybind_dir" ]; then
  echo "other_precision: pybind11 not importable: the default configure is not checked"
elif cmake -S "$root" -B "$tmp/build-default" "${pyargs[@]}" >"$tmp/default.log" 2>&1; then
  echo "other_precision: ok: the default configuration configures ($(grep -m1 'ppk working type' "$tmp/default.log" | sed 's/^-- //'))"
else
  echo "other_precision: FAIL: the default configuration does not configure:"; cat "$tmp/default.log"
  fail=1
fi
exit $fail
