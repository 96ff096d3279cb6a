#include "simd_dispatch.hpp"

#include <cstdlib>
#include <string_view>

namespace denoc::detail {

namespace {

int detectWidestLanes() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 8;
#if defined(DENOC_SIMD_FMA)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 4;
#else
  if (__builtin_cpu_supports("avx2")) return 4;
#endif
#endif
  return 2;
}

int readDefaultLanes() {
  const int widest = widestLanes();
  const char* env = std::getenv("DENOC_SIMD_WIDTH");
  if (env == nullptr) return widest;
  const std::string_view v(env);
  const int w = v == "1" ? 1 : v == "2" ? 2 : v == "4" ? 4 : v == "8" ? 8 : 0;
  return w != 0 && w <= widest ? w : widest;  // the widths nest: a CPU that runs 8 runs 4 and 2
}

}  // namespace

int widestLanes() {
  static const int lanes = detectWidestLanes();
  return lanes;
}

int defaultLanes() {
  static const int lanes = readDefaultLanes();
  return lanes;
}

int runnableLanes(int requested) {
  const int lanes = requested == 0 ? defaultLanes() : requested;
  return lanes > widestLanes() ? widestLanes() : lanes;
}

}  // namespace denoc::detail
