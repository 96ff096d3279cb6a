// The batch engine's SIMD lanes: at every width this CPU runs (it is asked through /proc/cpuinfo, an oracle
// independent of the dispatcher), the batch functions agree with the single-state functions (bit for bit in
// the default build, else to 1e-12 of each state's largest entry) on the repository's models (Stanford arm,
// Panda, planar arm, the URDF test files that build) and on random chains of 1..60 joints, with batches
// whose size is not a multiple of the width; the lane type's sin and cos equal the scalar ones lane by
// lane, large and non-finite arguments included; the dispatch follows the CPU and DENOC_SIMD_WIDTH.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"
#include "denoc/simd/lanes.hpp"
#include "support/batch_states.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

using testing::kLaneTolerance;
using testing::randomStates;
using testing::sameStates;
using testing::States;
using testing::supportedWidths;
using testing::widthName;

/// The flags of the first processor in /proc/cpuinfo.
std::string cpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return "";
}

bool hasFlag(const std::string& flags, const std::string& flag) {
  return flags.find(" " + flag + " ") != std::string::npos;
}

TEST(LaneDispatch, FollowsTheCpu) {
  const std::string flags = cpuFlags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags on this system";
#if defined(__x86_64__)
  EXPECT_TRUE(simdWidthSupported(SimdWidth::Scalar));
  EXPECT_TRUE(simdWidthSupported(SimdWidth::W2));
  EXPECT_EQ(simdWidthSupported(SimdWidth::W4), hasFlag(flags, "avx2"));
  EXPECT_EQ(simdWidthSupported(SimdWidth::W8), hasFlag(flags, "avx512f"));
  const SimdWidth widest = hasFlag(flags, "avx512f") ? SimdWidth::W8
                           : hasFlag(flags, "avx2")  ? SimdWidth::W4
                                                     : SimdWidth::W2;
  EXPECT_EQ(widestSimdWidth(), widest);
#endif
  EXPECT_FALSE(simdWidthSupported(static_cast<SimdWidth>(3)));
  EXPECT_FALSE(simdWidthSupported(static_cast<SimdWidth>(16)));
}

TEST(LaneDispatch, DefaultWidthFollowsTheEnvironment) {
  // ctest runs this test once more with DENOC_SIMD_WIDTH=2 (tests/CMakeLists.txt)
  const char* env = std::getenv("DENOC_SIMD_WIDTH");
  const std::string v = env ? env : "";
  const int asked = v == "1" ? 1 : v == "2" ? 2 : v == "4" ? 4 : v == "8" ? 8 : 0;
  const SimdWidth expected = asked != 0 && simdWidthSupported(static_cast<SimdWidth>(asked))
                                 ? static_cast<SimdWidth>(asked)
                                 : widestSimdWidth();
  EXPECT_EQ(defaultSimdWidth(), expected) << "DENOC_SIMD_WIDTH=" << v;
}

// ---- the lane type

template <int W>
void expectLaneSinCosEqualsScalar() {
  std::vector<double> xs = {0.0,  -0.0, 1e-300, 0.5,    -2.0, 3.14159, 1e4,   99999.0, 1e5,
                            -1e5, 1e6,  1e300,  -1e300, 7.25, -123.5,  2e-10, 1e-5,    -3.0};
  xs.push_back(std::numeric_limits<double>::infinity());
  xs.push_back(-std::numeric_limits<double>::infinity());
  xs.push_back(std::numeric_limits<double>::quiet_NaN());
  xs.push_back(std::numeric_limits<double>::denorm_min());
  for (std::size_t start = 0; start < xs.size(); ++start) {
    simd::Lanes<W> x(0.0), s, c;
    for (int l = 0; l < W; ++l) x[l] = xs[(start + static_cast<std::size_t>(l) * 5) % xs.size()];
    sincos(x, s, c);
    for (int l = 0; l < W; ++l) {
      double ss, cc;
      denoc::sincos(x[l], ss, cc);
      EXPECT_TRUE(sameStates({s[l], c[l]}, {ss, cc}, 2, 0.0)) << "W=" << W << " lane " << l << " x=" << x[l];
    }
  }
}

TEST(Lanes, SinCosEqualsTheScalarOneInEveryLane) {
  expectLaneSinCosEqualsScalar<2>();
  expectLaneSinCosEqualsScalar<4>();
  expectLaneSinCosEqualsScalar<8>();
}

TEST(Lanes, ArithmeticIsLaneByLane) {
  simd::Lanes<4> a(0.0), b(0.0);
  for (int l = 0; l < 4; ++l) {
    a[l] = 1.5 + l;
    b[l] = -0.25 * l + 3.0;
  }
  const simd::Lanes<4> r = (a * b - a / b + -a) * simd::Lanes<4>(2.0);
  for (int l = 0; l < 4; ++l) EXPECT_EQ(r[l], (a[l] * b[l] - a[l] / b[l] + -a[l]) * 2.0);
  static_assert(sizeof(simd::Lanes<8>) == 64 && alignof(simd::Lanes<8>) == alignof(double));
}

// ---- the batch functions on the repository's models and random chains

struct NamedModel {
  std::string name;
  std::shared_ptr<const Model> model;
};

std::vector<NamedModel> repositoryModels() {
  std::vector<NamedModel> models;
  const std::filesystem::path root(DENOC_SOURCE_DIR);
  models.push_back({"stanford (DH)", std::make_shared<const Model>(buildModelFromDH(stanfordArmDH()))});
  models.push_back({"planar (DH)", std::make_shared<const Model>(buildModelFromDH(planarArmDH()))});
  for (const char* file : {"examples/models/panda.urdf", "examples/models/stanford_arm.json",
                           "examples/models/planar_3r.json"}) {
    models.push_back({file, std::make_shared<const Model>(loadModelFile((root / file).string()))});
  }
  for (const auto& entry : std::filesystem::directory_iterator(root / "tests/data/urdf")) {
    try {
      auto model = std::make_shared<const Model>(buildModelFromUrdfFile(entry.path().string()));
      // the lanes run the serial recursions: the corpus's trees (its branched files, imported whole) are not
      // theirs
      if (model->serial) models.push_back({entry.path().filename().string(), std::move(model)});
    } catch (const std::exception&) {
      // the bad-file corpus: files that do not build are test_urdf's
    }
  }
  return models;
}

/// Every lane kernel (inverse dynamics with and without tip wrench, Saha's forward dynamics, the full
/// factor with I^-1) at every width, against the single-state functions.
void expectLanesMatch(const std::string& name, const std::shared_ptr<const Model>& model, std::size_t count,
                      std::uint32_t seed) {
  const Model& m = *model;
  const std::size_t n = static_cast<std::size_t>(m.n);
  const States s = randomStates(m.n, count, seed, 3.0);
  const std::vector<double> id = testing::referenceId(m, s, false);
  const std::vector<double> id_w = testing::referenceId(m, s, true);
  const std::vector<double> fd = testing::referenceFd(m, s, ForwardRoute::Saha);
  const testing::Factor ff = testing::referenceFactor(m, s);
  BatchPool pool(1);
  for (SimdWidth width : supportedWidths()) {
    BatchStats stats;
    BatchOptions o;
    o.width = width;
    o.stats = &stats;
    const std::string what = name + " n=" + std::to_string(n) + " " + widthName(width);
    std::vector<double> out(s.q.size());
    inverseDynamicsBatch(pool, model, count, s.q.data(), s.qd.data(), s.u.data(), out.data(), nullptr, o);
    EXPECT_TRUE(sameStates(out, id, n, kLaneTolerance)) << "inverse dynamics, " << what;
    // the lanes computed every state (up to kLanesMaxDof joints), none was refused
    const bool lanes = width != SimdWidth::Scalar && m.n <= kLanesMaxDof;
    const bool ff_lanes = width != SimdWidth::Scalar && m.n <= kLanesFullFactorMaxDof;
    EXPECT_EQ(stats.width, lanes ? width : SimdWidth::Scalar) << what;
    EXPECT_EQ(stats.lane_states, lanes ? count : 0u) << what;
    EXPECT_EQ(stats.single_states, lanes ? 0u : count) << what;
    inverseDynamicsBatch(pool, model, count, s.q.data(), s.qd.data(), s.u.data(), out.data(), s.wrench.data(),
                         o);
    EXPECT_TRUE(sameStates(out, id_w, n, kLaneTolerance)) << "inverse dynamics with tip wrench, " << what;
    forwardDynamicsBatch(pool, model, ForwardRoute::Saha, count, s.q.data(), s.qd.data(), s.u.data(),
                         out.data(), o);
    EXPECT_TRUE(sameStates(out, fd, n, kLaneTolerance)) << "forward dynamics, " << what;
    testing::Factor f(s);
    fullFactorBatch(pool, model, count, s.q.data(), nullptr, f.out(true, false), o);
    EXPECT_EQ(stats.lane_states, ff_lanes ? count : 0u) << what;
    EXPECT_TRUE(sameStates(f.I, ff.I, n * n, kLaneTolerance)) << "I, " << what;
    EXPECT_TRUE(sameStates(f.U, ff.U, n * n, kLaneTolerance)) << "U, " << what;
    EXPECT_TRUE(sameStates(f.D, ff.D, n, kLaneTolerance)) << "D, " << what;
    EXPECT_TRUE(sameStates(f.log_det, ff.log_det, 1, kLaneTolerance)) << "log det, " << what;
    EXPECT_TRUE(sameStates(f.Minv, ff.Minv, n * n, kLaneTolerance)) << "I^-1, " << what;
  }
}

TEST(BatchLanes, RepositoryModels) {
  const std::vector<NamedModel> models = repositoryModels();
  ASSERT_GE(models.size(), 7u);
  for (const NamedModel& nm : models) expectLanesMatch(nm.name, nm.model, 21, 3u);
}

TEST(BatchLanes, RandomChainsOf1To60Joints) {
  for (int n = 1; n <= 60; ++n) {
    ModelSpec spec = testing::randomChainSpec(n, 500u + static_cast<std::uint32_t>(n), 0.3);
    for (std::size_t i = 0; i < spec.joints.size(); i += 3)
      spec.joints[i].armature = 0.02 * static_cast<double>(i + 1);
    const auto model = std::make_shared<const Model>(buildModel(spec));
    // 13 states: one or more full groups and a partial one at every width
    expectLanesMatch("random chain", model, 13, 900u + static_cast<std::uint32_t>(n));
  }
}

TEST(BatchLanes, LongChainsUpToTheLaneLimit) {
  // the full factor's lanes write U straight to the outputs above kDenseUDUMaxDof: chains beyond the 1..60
  // above, up to kLanesMaxDof
  for (int n : {61, 96, kLanesMaxDof}) {
    ModelSpec spec = testing::randomChainSpec(n, 600u + static_cast<std::uint32_t>(n), 0.3);
    for (std::size_t i = 0; i < spec.joints.size(); i += 4) spec.joints[i].armature = 0.03;
    expectLanesMatch("long random chain", std::make_shared<const Model>(buildModel(spec)), 11,
                     950u + static_cast<std::uint32_t>(n));
  }
}

TEST(LaneDispatch, AutoRunsTheFullFactorOfLongChainsAtMost4LanesWide) {
  // SimdWidth::Auto: the default width up to kLanesFullFactorAutoW8MaxDof joints, at most W4 above; an
  // explicit width is honoured (ctest also runs this with DENOC_SIMD_WIDTH=2)
  const SimdWidth dflt = defaultSimdWidth();
  const SimdWidth capped = static_cast<int>(dflt) > 4 ? SimdWidth::W4 : dflt;
  BatchPool pool(1);
  for (int n : {kLanesFullFactorAutoW8MaxDof, kLanesFullFactorAutoW8MaxDof + 1}) {
    const auto model = std::make_shared<const Model>(buildModel(testing::randomChainSpec(n, 31u)));
    const States s = randomStates(n, 16, 32u, 2.0);
    testing::Factor f(s);
    BatchStats stats;
    BatchOptions o;
    o.stats = &stats;
    fullFactorBatch(pool, model, 16, s.q.data(), nullptr, f.out(false, false), o);
    EXPECT_EQ(stats.width, n > kLanesFullFactorAutoW8MaxDof ? capped : dflt) << "n=" << n;
    inverseDynamicsBatch(pool, model, 16, s.q.data(), s.qd.data(), s.u.data(), f.D.data(), nullptr, o);
    EXPECT_EQ(stats.width, dflt) << "inverse dynamics, n=" << n;
    if (simdWidthSupported(SimdWidth::W8)) {
      o.width = SimdWidth::W8;
      fullFactorBatch(pool, model, 16, s.q.data(), nullptr, f.out(false, false), o);
      EXPECT_EQ(stats.width, SimdWidth::W8) << "explicit W8, n=" << n;
    }
  }
}

TEST(BatchLanes, ModelsAboveTheLaneLimitRunStateByState) {
  const auto model =
      std::make_shared<const Model>(buildModel(testing::randomChainSpec(kLanesMaxDof + 3, 77u)));
  expectLanesMatch("random chain above kLanesMaxDof", model, 3, 78u);
}

}  // namespace
}  // namespace denoc
