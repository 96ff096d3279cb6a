// Operation counts of the core algorithms, counted with the counting scalar on the all-revolute chains of
// docs/design.md, fitted exactly as polynomials in n and printed as a markdown table beside the figures of
// Saha 1999, Tables 1 and 2. Usage: bench_opcount > table.md (see docs/operation-counts.md).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "denoc/algorithm/fixman.hpp"
#include "denoc/denoc.hpp"
#include "models.hpp"
#include "support/counting_scalar.hpp"

namespace {

using denoc::testing::CountingScalar;
using denoc::testing::OpCounts;
using CModel = denoc::ModelTpl<CountingScalar>;
using CData = denoc::DataTpl<CountingScalar>;
using CVecX = denoc::Types<CountingScalar>::VecX;

constexpr int kMaxN = 40;  // counts are taken for n = 1..kMaxN

/// Counts of one algorithm run on the benchmark chain of n joints (docs/design.md).
using Runner = std::function<void(const CModel&, CData&, const CVecX& q, const CVecX& qd, const CVecX& u)>;

OpCounts count(const Runner& run, int n) {
  const CModel model = denoc::buildModel(denoc::bench::chainSpec(n)).cast<CountingScalar>();
  CData data(model);
  std::mt19937 rng(7u + static_cast<unsigned>(n));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  CVecX q(n), qd(n), x(n);
  for (int i = 0; i < n; ++i) {
    q[i] = 3.0 * u(rng);
    qd[i] = u(rng);
    x[i] = u(rng);
  }
  denoc::testing::resetOpCounts();
  run(model, data, q, qd, x);
  return denoc::testing::opCounts();
}

/// An exact polynomial in n with rational coefficients k_i / 6 (degree <= 3 fits of integer sequences).
struct Poly {
  std::int64_t k[4] = {0, 0, 0, 0};  // 6 * coefficient of n^i
  int degree = 0;
  int from = 0;  // exact for every n in [from, kMaxN]
  std::int64_t at6(std::int64_t n) const { return ((k[3] * n + k[2]) * n + k[1]) * n + k[0]; }
};

/// Fits c(n) for n = n0..n0+d exactly (Newton's forward differences), checks it on the rest.
Poly fit(const std::vector<std::int64_t>& c, int degree) {
  const int n0 = kMaxN - degree;  // fit on the largest n, then see how far down it holds
  // forward differences at n0
  std::vector<std::int64_t> diff(c.begin() + n0, c.begin() + n0 + degree + 1);
  std::vector<std::int64_t> delta;
  for (int j = 0; j <= degree; ++j) {
    delta.push_back(diff[0]);
    for (int i = 0; i + 1 < static_cast<int>(diff.size()); ++i) diff[i] = diff[i + 1] - diff[i];
    diff.pop_back();
  }
  // c(n) = sum_j delta_j binom(n - n0, j); expand 6 * binom(m, j) in powers of n (m = n - n0)
  Poly p;
  p.degree = degree;
  // polynomials in n as coefficient vectors, times 6 so that binom(m, 3) = m(m-1)(m-2)/6 stays integral
  std::vector<std::int64_t> basis = {6};  // 6 * binom(m, 0)
  for (int j = 0; j <= degree; ++j) {
    if (j > 0) {
      // basis <- basis * (m - (j - 1)) / j = basis * (n - n0 - j + 1) / j
      std::vector<std::int64_t> next(basis.size() + 1, 0);
      for (std::size_t i = 0; i < basis.size(); ++i) {
        next[i + 1] += basis[i];
        next[i] += basis[i] * (-n0 - j + 1);
      }
      for (auto& v : next) v /= j;  // exact: 6 * binom is an integer polynomial for j <= 3
      basis = next;
    }
    for (std::size_t i = 0; i < basis.size(); ++i) p.k[i] += delta[j] * basis[i];
  }
  p.from = kMaxN;
  for (int n = kMaxN; n >= 1 && p.at6(n) == 6 * c[n]; --n) p.from = n;
  return p;
}

std::string term(std::int64_t k6, int power, bool first) {
  if (k6 == 0) return "";
  std::ostringstream os;
  const bool neg = k6 < 0;
  const std::int64_t a = neg ? -k6 : k6;
  const std::int64_t g = std::gcd(a, std::int64_t{6});
  const std::int64_t num = a / g, den = 6 / g;
  if (first) {
    if (neg) os << "-";
  } else {
    os << (neg ? " - " : " + ");
  }
  if (den == 1) {
    if (num != 1 || power == 0) os << num;
  } else {
    os << num << "/" << den << " ";
  }
  if (power >= 1) os << "n";
  if (power >= 2) os << "^" << power;
  return os.str();
}

std::string str(const Poly& p) {
  std::string s;
  for (int i = 3; i >= 0; --i) {
    const std::string t = term(p.k[i], i, s.empty());
    s += t;
  }
  return s.empty() ? "0" : s;
}

struct Algorithm {
  std::string name;
  std::string routine;
  int degree;
  Runner run;
  std::string paper_m, paper_a;  // Saha 1999 Tables 1 and 2
};

}  // namespace

int main() {
  using CRef = Eigen::Ref<const CVecX>;
  const std::vector<Algorithm> algorithms = {
      {"inverse dynamics", "`inverseDynamics`", 1,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
         denoc::inverseDynamics(m, d, CRef(q), CRef(qd), CRef(u));
       },
       "120n - 44", "97n - 55"},
      {"forward dynamics, O(n) (Saha)", "`forwardDynamics`", 1,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
         denoc::forwardDynamics(m, d, CRef(q), CRef(qd), CRef(u));
       },
       "201n - 335", "193n - 361"},
      {"forward dynamics, O(n) (Saha), given phi", "`forwardDynamics` minus the inverse dynamics for phi", 1,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
         // section 5.2 takes phi = tau - C qd (- g) as an input, from any inverse dynamics
         denoc::forwardDynamics(m, d, CRef(q), CRef(qd), CRef(u));
         const OpCounts all = denoc::testing::opCounts();
         denoc::testing::resetOpCounts();
         denoc::detail::rnea<CountingScalar>(m, d, CRef(q), CRef(qd), nullptr, nullptr, true, d.tau);
         denoc::testing::opCounts() = all - denoc::testing::opCounts();
       },
       "201n - 335", "193n - 361"},
      {"forward dynamics, O(n) (Fixman)", "`forwardDynamicsFixman`", 1,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
         denoc::forwardDynamicsFixman(m, d, CRef(q), CRef(qd), CRef(u));
       },
       "", ""},
      {"UDU^T factors (U not formed)", "`computeUDU(.., false)`", 1,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX&, const CVecX&) {
         denoc::computeUDU(m, d, CRef(q), false);
       },
       "", ""},
      {"UDU^T with explicit U", "`computeUDU`", 2,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX&, const CVecX&) {
         denoc::computeUDU(m, d, CRef(q), true);
       },
       "", ""},
      {"inertia matrix (composite bodies)", "`computeInertiaMatrix`", 2,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX&, const CVecX&) {
         denoc::computeInertiaMatrix(m, d, CRef(q));
       },
       "", ""},
      {"full factor (I, U, D, log det)", "`computeFullFactor`", 2,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX&, const CVecX&) {
         denoc::computeFullFactor(m, d, CRef(q));
       },
       "", ""},
      {"inverse inertia I^-1", "`computeInverseInertia`", 2,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX&, const CVecX&) {
         denoc::computeInverseInertia(m, d, CRef(q));
       },
       "", ""},
      {"forward dynamics, I(q) + Cholesky", "`forwardDynamicsCholesky`", 3,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
         denoc::forwardDynamicsCholesky(m, d, CRef(q), CRef(qd), CRef(u));
       },
       "", ""},
      {"inverse-dynamics derivatives (dtau/dq, dtau/dqd)", "`computeInverseDynamicsDerivatives`", 2,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
         denoc::computeInverseDynamicsDerivatives(m, d, CRef(q), CRef(qd), CRef(u));
       },
       "", ""},
      {"forward-dynamics derivatives (dqdd/dq, dqdd/dqd, I^-1)", "`computeForwardDynamicsDerivatives`", 2,
       [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
         denoc::computeForwardDynamicsDerivatives(m, d, CRef(q), CRef(qd), CRef(u));
       },
       "", ""},
  };

  std::cout << "| computation | routine | multiplications + divisions | of which divisions | additions + "
               "subtractions | sin, cos | sqrt | log | exact for n >= | n = 6: M / A | n = 12: M / A | "
               "Saha 1999: M | Saha 1999: A |\n";
  std::cout << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Algorithm& a : algorithms) {
    std::vector<OpCounts> c(kMaxN + 1);
    for (int n = 1; n <= kMaxN; ++n) c[n] = count(a.run, n);
    const auto series = [&](std::uint64_t (*get)(const OpCounts&)) {
      std::vector<std::int64_t> s(kMaxN + 1, 0);
      for (int n = 1; n <= kMaxN; ++n) s[n] = static_cast<std::int64_t>(get(c[n]));
      return s;
    };
    const Poly m = fit(series([](const OpCounts& k) { return k.mulDiv(); }), a.degree);
    const Poly dv = fit(series([](const OpCounts& k) { return k.div; }), a.degree);
    const Poly ad = fit(series([](const OpCounts& k) { return k.add; }), a.degree);
    const Poly tr = fit(series([](const OpCounts& k) { return k.sin + k.cos; }), a.degree);
    const Poly sq = fit(series([](const OpCounts& k) { return k.sqrt; }), a.degree);
    const Poly lg = fit(series([](const OpCounts& k) { return k.log; }), a.degree);
    const int from = std::max({m.from, dv.from, ad.from, tr.from, sq.from, lg.from});
    const auto paper = [](const std::string& s) { return s.empty() ? std::string("—") : s; };
    std::cout << "| " << a.name << " | " << a.routine << " | " << str(m) << " | " << str(dv) << " | "
              << str(ad) << " | " << str(tr) << " | " << str(sq) << " | " << str(lg) << " | " << from << " | "
              << c[6].mulDiv() << " / " << c[6].add << " | " << c[12].mulDiv() << " / " << c[12].add << " | "
              << paper(a.paper_m) << " | " << paper(a.paper_a) << " |\n";
  }
  // the papers' figures per DOF beside ours
  {
    const auto perDof = [](const Runner& run, int n) {
      return static_cast<double>(count(run, n).mulDiv()) / n;
    };
    const Runner id = [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
      denoc::inverseDynamics(m, d, CRef(q), CRef(qd), CRef(u));
    };
    const Runner fd = [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
      denoc::forwardDynamics(m, d, CRef(q), CRef(qd), CRef(u));
    };
    const Runner fd_given_phi = [](const CModel& m, CData& d, const CVecX& q, const CVecX& qd,
                                   const CVecX& u) {
      denoc::forwardDynamics(m, d, CRef(q), CRef(qd), CRef(u));
      const OpCounts all = denoc::testing::opCounts();
      denoc::testing::resetOpCounts();
      denoc::detail::rnea<CountingScalar>(m, d, CRef(q), CRef(qd), nullptr, nullptr, true, d.tau);
      denoc::testing::opCounts() = all - denoc::testing::opCounts();
    };
    std::cout << "\nMultiplications and divisions per DOF, ours beside the papers' (Saha 1999, Tables 1 and "
                 "2):\n\n";
    std::cout
        << "| n | inverse dynamics | 120n - 44 | O(n) forward dynamics | of it given phi | 201n - 335 |\n"
           "|---|---|---|---|---|---|\n";
    for (int n : {6, 7, 12, 24, 40}) {
      char row[200];
      std::snprintf(row, sizeof row, "| %d | %.1f | %.1f | %.1f | %.1f | %.1f |\n", n, perDof(id, n),
                    (120.0 * n - 44) / n, perDof(fd, n), perDof(fd_given_phi, n), (201.0 * n - 335) / n);
      std::cout << row;
    }
  }
  // where the O(n) forward dynamics spends its operations, through its building blocks
  {
    const auto slope = [](const Runner& run) {
      const OpCounts a = count(run, 20), b = count(run, 21);
      return std::make_pair(static_cast<std::int64_t>(b.mulDiv()) - static_cast<std::int64_t>(a.mulDiv()),
                            static_cast<std::int64_t>(b.add) - static_cast<std::int64_t>(a.add));
    };
    using P = std::pair<std::int64_t, std::int64_t>;
    const auto minus = [](P a, P b) { return P(a.first - b.first, a.second - b.second); };
    const P angles = slope([](const CModel& m, CData& d, const CVecX& q, const CVecX&, const CVecX&) {
      denoc::detail::jointAngles(m, d, CRef(q));
    });
    const P id0 = slope([](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX&) {
      denoc::detail::rnea<CountingScalar>(m, d, CRef(q), CRef(qd), nullptr, nullptr, true, d.tau);
    });
    const P placements = slope([](const CModel& m, CData& d, const CVecX& q, const CVecX&, const CVecX&) {
      denoc::detail::commonPlacementsAndInertias(m, d, CRef(q));
    });
    const P elimination = slope([](const CModel& m, CData& d, const CVecX& q, const CVecX&, const CVecX&) {
      denoc::detail::commonPlacementsAndInertias(m, d, CRef(q));
      denoc::testing::resetOpCounts();
      denoc::detail::articulated(m, d, false);
    });
    const P fd = slope([](const CModel& m, CData& d, const CVecX& q, const CVecX& qd, const CVecX& u) {
      denoc::forwardDynamics(m, d, CRef(q), CRef(qd), CRef(u));
    });
    const P sweeps = minus(minus(minus(fd, id0), minus(placements, angles)), elimination);
    const auto row = [](const std::string& name, P v) {
      std::cout << "| " << name << " | " << v.first << " | " << v.second << " |\n";
    };
    std::cout << "\nPer joint (slope in n), the parts of `forwardDynamics`:\n\n";
    std::cout << "| part | multiplications + divisions per joint | additions per joint |\n|---|---|---|\n";
    row("joint angles theta_i = theta0_i + q_i (sin, cos counted apart)", angles);
    row("inverse dynamics with qdd = 0, for phi (joint angles included)", id0);
    row("common-frame placements R0_i, O_i, p_i and link inertias M_i", minus(placements, angles));
    row("reverse Gaussian elimination (Mh_k, psi_k, mh_k)", elimination);
    row("phi, the three sweeps of section 5.2 (the rest)", sweeps);
    row("`forwardDynamics`, all of it", fd);
    row("`forwardDynamics` without the inverse dynamics for phi", minus(fd, id0));
  }
  std::cout << "\nCounted on the chains of n revolute joints of docs/design.md (n = 1.." << kMaxN
            << "); every multiplication and addition the code performs is counted, including those by a "
               "structural 0 or 1; negations are not counted; sin, cos, sqrt and log are counted apart. "
               "The papers' M is multiplications plus divisions, A additions plus subtractions.\n";
  return 0;
}
