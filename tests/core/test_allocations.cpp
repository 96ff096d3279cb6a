// Heap allocations of the paths this test suite owns, counted by replacing malloc (glibc's documented way to
// replace the allocator; Eigen and operator new both allocate through malloc): the blocked Cholesky route
// and I(q)^-1 allocate nothing; a batch allocates the same amount for 64 states as for 4096 at every SIMD
// width (nothing per state). Not under AddressSanitizer or ThreadSanitizer, which own malloc themselves.
// Oracle: the malloc replacement's counter (tests/support/count_allocations.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <random>

#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"
#include "support/batch_states.hpp"
#include "support/count_allocations.hpp"  // replaces malloc in this binary
#include "support/random_chain.hpp"

namespace denoc {
namespace {

/// Allocations made by f().
template <typename F>
long allocations(F&& f) {
#if defined(DENOC_COUNT_ALLOCATIONS)
  return testing::allocationsIn(std::forward<F>(f));
#else
  f();
  return -1;
#endif
}

#if defined(DENOC_COUNT_ALLOCATIONS)
#define DENOC_REQUIRE_COUNTING()
#else
#define DENOC_REQUIRE_COUNTING() GTEST_SKIP() << "allocations are not counted under a sanitizer"
#endif

TEST(Allocations, CountingWorks) {
  DENOC_REQUIRE_COUNTING();
  EXPECT_GE(allocations([] { auto p = std::make_unique<double[]>(1000); }), 1);
}

TEST(Allocations, BlockedCholeskyRouteAndInverseAllocateNothing) {
  DENOC_REQUIRE_COUNTING();
  for (int n : {kCholeskyBlockedMinDof, 100, 500}) {
    const Model model = buildModel(testing::randomChainSpec(n, 7u));
    Data data(model);
    std::mt19937 rng(3);
    const Eigen::VectorXd q = testing::randomVectorX(rng, n, 2.0);
    const Eigen::VectorXd qd = testing::randomVectorX(rng, n, 1.0);
    const Eigen::VectorXd tau = testing::randomVectorX(rng, n, 1.0);
    EXPECT_EQ(allocations([&] { forwardDynamicsCholesky(model, data, q, qd, tau); }), 0) << "n=" << n;
    EXPECT_EQ(allocations([&] { computeInverseInertia(model, data, q); }), 0) << "n=" << n;
    EXPECT_EQ(allocations([&] { computeFullFactor(model, data, q); }), 0) << "n=" << n;
  }
}

TEST(Allocations, BatchesAllocateNothingPerState) {
  DENOC_REQUIRE_COUNTING();
  const auto model = std::make_shared<const Model>(buildModel(testing::randomChainSpec(9, 11u)));
  const testing::States big = testing::randomStates(model->n, 4096, 5u);
  std::vector<double> out(big.q.size());
  testing::Factor f(big);
  for (unsigned threads : {1u, 2u}) {
    BatchPool pool(threads);
    for (SimdWidth width : testing::supportedWidths()) {
      BatchOptions o;
      o.width = width;
      o.grain = 64;
      for (int op = 0; op < 3; ++op) {
        const auto batch = [&](std::size_t count) {
          if (op == 0)
            inverseDynamicsBatch(pool, model, count, big.q.data(), big.qd.data(), big.u.data(), out.data(),
                                 nullptr, o);
          if (op == 1)
            forwardDynamicsBatch(pool, model, ForwardRoute::Saha, count, big.q.data(), big.qd.data(),
                                 big.u.data(), out.data(), o);
          if (op == 2) fullFactorBatch(pool, model, count, big.q.data(), big.qd.data(), f.out(true, true), o);
        };
        batch(4096);  // workspaces made
        const long small = allocations([&] { batch(64); });
        const long large = allocations([&] { batch(4096); });
        // a worker may make its workspace during the measured call on a busy machine (about 150 allocations);
        // one allocation per state would be 4032 more
        EXPECT_LE(large, small + (threads == 1 ? 8 : 1000))
            << "op " << op << " threads " << threads << " " << testing::widthName(width) << ": " << small
            << " allocations for 64 states, " << large << " for 4096";
      }
    }
  }
}

}  // namespace
}  // namespace denoc
