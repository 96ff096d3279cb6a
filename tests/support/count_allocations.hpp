// Counting heap allocations in a test binary: replaces malloc, calloc, realloc and aligned_alloc (glibc's
// documented way
// to replace the allocator) with versions that forward to glibc and count calls while counting is on. Eigen
// and operator new both allocate through malloc. Include in exactly one translation unit of a test binary.
// Not under AddressSanitizer or ThreadSanitizer, which own malloc themselves: DENOC_COUNT_ALLOCATIONS is
// then undefined and the tests that use it skip.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <cstddef>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DENOC_COUNT_ALLOCATIONS 1
namespace denoc::testing {
inline std::atomic<bool> g_count_allocations{false};
inline std::atomic<long> g_allocations{0};

/// Heap allocations made by f().
template <typename F>
long allocationsIn(F&& f) {
  g_allocations = 0;
  g_count_allocations = true;
  f();
  g_count_allocations = false;
  return g_allocations.load();
}

/// Whether the counter counts: an Eigen vector made on the heap is seen (the check beside every "no
/// allocation" test, so that a counter that counts nothing cannot pass them).
inline bool counterCounts() {
  volatile double sink = 0.0;
  return allocationsIn([&] { sink = Eigen::VectorXd::Ones(50).eval().sum(); }) > 0;
}
}  // namespace denoc::testing
extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void* malloc(std::size_t n) noexcept {
  if (denoc::testing::g_count_allocations.load(std::memory_order_relaxed)) ++denoc::testing::g_allocations;
  return __libc_malloc(n);
}
void free(void* p) noexcept { __libc_free(p); }
void* calloc(std::size_t a, std::size_t b) noexcept {
  if (denoc::testing::g_count_allocations.load(std::memory_order_relaxed)) ++denoc::testing::g_allocations;
  return __libc_calloc(a, b);
}
void* realloc(void* p, std::size_t n) noexcept {
  if (denoc::testing::g_count_allocations.load(std::memory_order_relaxed)) ++denoc::testing::g_allocations;
  return __libc_realloc(p, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) noexcept {
  if (denoc::testing::g_count_allocations.load(std::memory_order_relaxed)) ++denoc::testing::g_allocations;
  return __libc_memalign(alignment, n);
}
}
#endif

namespace denoc::testing {
/// Why the allocation tests skip where DENOC_COUNT_ALLOCATIONS is undefined.
inline constexpr const char* kNoAllocationCounting =
    "allocation counting needs glibc and no AddressSanitizer or ThreadSanitizer";
}  // namespace denoc::testing
