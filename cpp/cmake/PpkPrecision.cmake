# ppk_check_long_double(<flags>): refuse at configure time a long double the kernel cannot certify
# with (fewer than 64 mantissa bits, or a narrower exponent range than x87 extended / IEEE quad).
# The test is cpp/include/ppk/real.hpp's own static_assert, compiled with the target's flags
# (CMAKE_CXX_FLAGS, e.g. CXXFLAGS=-mlong-double-64, plus <flags>); see docs/precision.md.
include(CheckCXXSourceCompiles)

function(ppk_check_long_double flags)
  string(REPLACE ";" " " flag_string "${flags}")
  set(CMAKE_REQUIRED_FLAGS "${flag_string}")
  set(CMAKE_REQUIRED_INCLUDES "${CMAKE_CURRENT_SOURCE_DIR}/cpp/include")
  set(CMAKE_REQUIRED_QUIET ON)
  unset(PPK_REAL_OK CACHE)   # re-checked on every configure: the flags may have changed
  check_cxx_source_compiles("#include \"ppk/real.hpp\"\nint main() { return 0; }" PPK_REAL_OK)
  if(PPK_REAL_OK)
    message(STATUS "ppk working type: long double with >= 64 mantissa bits (certified)")
    return()
  endif()
  set(digits "fewer than 64")
  foreach(candidate 53 64 106 113)
    unset(PPK_LD_DIGITS CACHE)
    check_cxx_source_compiles("#include <limits>
static_assert(std::numeric_limits<long double>::digits == ${candidate}, \"\");
int main() { return 0; }" PPK_LD_DIGITS)
    if(PPK_LD_DIGITS)
      set(digits "${candidate}")
      break()
    endif()
  endforeach()
  unset(PPK_LD_DIGITS CACHE)
  set(why "")
  if(digits STREQUAL "53")
    set(why ": it is a plain double, as on macOS arm64, MSVC, or x86-64 with -mlong-double-64")
  elseif(digits STREQUAL "106")
    set(why ", but a double's exponent range (IBM double-double, ppc64le)")
  endif()
  message(FATAL_ERROR
    "ppk needs long double with >= 64 mantissa bits (and the x87/quad exponent range) for its "
    "certified error bounds; this compiler's long double has ${digits} mantissa bits${why} "
    "(flags: '${CMAKE_CXX_FLAGS} ${flag_string}'). A build with it would return wrong or NaN deltas, "
    "so ppk refuses it. Build on x86-64 (x87 80-bit long double) or aarch64 Linux (IEEE quad); "
    "see docs/precision.md.")
endfunction()
