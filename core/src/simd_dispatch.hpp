// Which SIMD widths this CPU runs, for the core's run-time dispatch (batch kernels, blocked Cholesky).
// Private to the core; the public face is denoc/batch.hpp (SimdWidth).
#pragma once

namespace denoc::detail {

/// The widest lane count this CPU runs: 8 with AVX-512F, 4 with AVX2, else 2 (SSE2 on x86-64, or the
/// target's 128-bit vectors). Asked of the CPU once (__builtin_cpu_supports, which also checks that the
/// operating system saves the wide registers).
int widestLanes();

/// DENOC_SIMD_WIDTH (1, 2, 4 or 8) when set to a width this CPU runs, else widestLanes(). Read once.
int defaultLanes();

/// The lanes a kernel takes when asked for `requested` (0: defaultLanes()): never more than widestLanes().
int runnableLanes(int requested);

}  // namespace denoc::detail
