// The workspace's contract (data.hpp, docs/algorithms.md "The workspace"): each result field is written only
// by the functions its group names. Every public function is called at a second state on a Data that holds
// the results of a first; every result field outside the function's documented write set must come out
// bit for bit as it was, and every field inside it must have changed (the two states differ, so a field the
// function really computes differs too). A function that used a result field as scratch, or a header that
// names the wrong writer, fails here.
// Oracle: the workspace's own bits before the call, and data.hpp's write sets.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "denoc/algorithm/operational_space.hpp"
#include "denoc/denoc.hpp"
#include "support/robots.hpp"

namespace denoc {
namespace {

using Fields = std::map<std::string, std::vector<double>>;

template <typename M>
void put(Fields& f, const std::string& name, const M& m) {
  auto& v = f[name];
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i) v.push_back(m(i, j));
}

template <typename V>
void putAll(Fields& f, const std::string& name, const std::vector<V>& list) {
  for (const V& m : list) put(f, name, m);
}

/// Every result field of data.hpp's "Results" part.
Fields results(const Data& d) {
  Fields f;
  put(f, "tau", d.tau);
  put(f, "qdd", d.qdd);
  put(f, "M", d.M);
  put(f, "U", d.U);
  put(f, "D", d.D);
  f["log_det"] = {d.log_det};
  put(f, "Minv", d.Minv);
  putAll(f, "R", d.R);
  putAll(f, "rho", d.rho);
  putAll(f, "R0", d.R0);
  putAll(f, "O0", d.O0);
  putAll(f, "C0", d.C0);
  putAll(f, "p0", d.p0);
  put(f, "C", d.C);
  put(f, "cqd", d.cqd);
  put(f, "g", d.g);
  put(f, "bias", d.bias);
  f["fx_log_det"] = {d.fx_log_det};
  putAll(f, "kin_R", d.kin_R);
  putAll(f, "kin_p", d.kin_p);
  put(f, "J", d.J);
  put(f, "Jdot_qd", d.Jdot_qd);
  put(f, "Lambda", d.Lambda);
  put(f, "Lambda_inv", d.Lambda_inv);
  put(f, "dtau_dq", d.dtau_dq);
  put(f, "dtau_dqd", d.dtau_dqd);
  put(f, "dqdd_dq", d.dqdd_dq);
  put(f, "dqdd_dqd", d.dqdd_dqd);
  return f;
}

struct State {
  Eigen::VectorXd q, qd, qdd, tau;
  Eigen::Matrix<double, 6, 1> wrench;
};

State randomState(const Model& model, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  State s{testing::randomConfiguration(model, rng), Eigen::VectorXd(model.n), Eigen::VectorXd(model.n),
          Eigen::VectorXd(model.n), Eigen::Matrix<double, 6, 1>()};
  for (int i = 0; i < model.n; ++i) {
    s.qd[i] = u(rng);
    s.qdd[i] = u(rng);
    s.tau[i] = 5.0 * u(rng);
  }
  for (int i = 0; i < 6; ++i) s.wrench[i] = u(rng);
  return s;
}

struct Call {
  std::string name;
  std::set<std::string> writes;  // the result fields the function writes, as data.hpp documents them
  std::function<void(const Model&, Data&, const State&)> run;
};

std::vector<Call> calls(const Model& model) {
  const int tip = model.n;  // the tip frame
  const Eigen::Vector3d point(0.01, -0.02, 0.03);
  std::vector<Call> list{
      {"inverseDynamics",
       {"tau"},
       [](const Model& m, Data& d, const State& s) { inverseDynamics(m, d, s.q, s.qd, s.qdd); }},
      {"inverseDynamics (tip wrench)",
       {"tau"},
       [](const Model& m, Data& d, const State& s) { inverseDynamics(m, d, s.q, s.qd, s.qdd, s.wrench); }},
      {"forwardDynamics",
       {"qdd", "D", "p0"},
       [](const Model& m, Data& d, const State& s) { forwardDynamics(m, d, s.q, s.qd, s.tau); }},
      {"forwardDynamicsCholesky",
       {"qdd", "M", "p0"},
       [](const Model& m, Data& d, const State& s) { forwardDynamicsCholesky(m, d, s.q, s.qd, s.tau); }},
      {"forwardDynamicsFixman",
       {"qdd", "fx_log_det", "R", "rho"},
       [](const Model& m, Data& d, const State& s) { forwardDynamicsFixman(m, d, s.q, s.qd, s.tau); }},
      {"fixmanSolve",
       {"fx_log_det", "R", "rho"},
       [](const Model& m, Data& d, const State& s) {
         Eigen::VectorXd x(m.n);
         fixmanSolve(m, d, s.q, s.tau, x);
       }},
      {"fixmanLogDet",
       {"fx_log_det", "R", "rho"},
       [](const Model& m, Data& d, const State& s) { fixmanLogDet(m, d, s.q); }},
      {"computeInertiaMatrix",
       {"M", "p0"},
       [](const Model& m, Data& d, const State& s) { computeInertiaMatrix(m, d, s.q); }},
      {"computeUDU",
       {"U", "D", "log_det", "p0"},
       [](const Model& m, Data& d, const State& s) { computeUDU(m, d, s.q); }},
      {"computeFullFactor",
       {"M", "U", "D", "log_det", "p0"},
       [](const Model& m, Data& d, const State& s) { computeFullFactor(m, d, s.q); }},
      {"computeInverseInertia",
       {"Minv", "M", "U", "D", "p0"},
       [](const Model& m, Data& d, const State& s) { computeInverseInertia(m, d, s.q); }},
      {"computeConvectiveMatrix",
       {"C", "R", "rho", "R0", "O0", "C0", "p0"},
       [](const Model& m, Data& d, const State& s) { computeConvectiveMatrix(m, d, s.q, s.qd); }},
      {"computeVelocityBias",
       {"cqd"},
       [](const Model& m, Data& d, const State& s) { computeVelocityBias(m, d, s.q, s.qd); }},
      {"computeGravity", {"g"}, [](const Model& m, Data& d, const State& s) { computeGravity(m, d, s.q); }},
      {"computeBias",
       {"bias"},
       [](const Model& m, Data& d, const State& s) { computeBias(m, d, s.q, s.qd); }},
      {"computeLocalPlacements",
       {"R", "rho"},
       [](const Model& m, Data& d, const State& s) { computeLocalPlacements(m, d, s.q); }},
      {"computeCommonPlacements (after the local ones)",
       {"R", "rho", "R0", "O0", "C0", "p0"},
       [](const Model& m, Data& d, const State& s) {
         computeLocalPlacements(m, d, s.q);
         computeCommonPlacements(m, d);
       }},
      {"mechanicalEnergy",
       {"R", "rho", "R0", "O0", "C0", "p0"},
       [](const Model& m, Data& d, const State& s) {
         double kinetic = 0.0, potential = 0.0;
         mechanicalEnergy(m, d, s.q, s.qd, kinetic, potential);
       }},
      {"forwardKinematics",
       {"kin_R", "kin_p"},
       [](const Model& m, Data& d, const State& s) { forwardKinematics(m, d, s.q); }},
      {"framePlacement",
       {"kin_R", "kin_p"},
       [tip](const Model& m, Data& d, const State& s) {
         Eigen::Matrix3d R;
         Eigen::Vector3d p;
         framePlacement(m, d, s.q, tip, R, p);
       }},
      {"computeFrameJacobian",
       {"J", "kin_R", "kin_p"},
       [tip, point](const Model& m, Data& d, const State& s) {
         computeFrameJacobian(m, d, s.q, tip, point);
       }},
      {"computeFrameJdotQd",
       {"Jdot_qd", "J", "kin_R", "kin_p"},
       [tip, point](const Model& m, Data& d, const State& s) {
         computeFrameJdotQd(m, d, s.q, s.qd, tip, point);
       }},
      {"computeInverseDynamicsDerivatives",
       {"dtau_dq", "dtau_dqd", "tau"},
       [](const Model& m, Data& d, const State& s) {
         computeInverseDynamicsDerivatives(m, d, s.q, s.qd, s.qdd);
       }},
      {"computeForwardDynamicsDerivatives",
       {"dqdd_dq", "dqdd_dqd", "qdd", "Minv", "M", "U", "D", "p0", "dtau_dq", "dtau_dqd", "tau"},
       [](const Model& m, Data& d, const State& s) {
         computeForwardDynamicsDerivatives(m, d, s.q, s.qd, s.tau);
       }},
  };
  // a full 6-row task needs 6 joints or more (with fewer, J I^-1 J^T is singular and the call refuses)
  if (model.n >= 6) {
    list.push_back({"computeOperationalSpaceInertia",
                    {"Lambda", "Lambda_inv", "kin_R", "kin_p", "D", "p0"},
                    [tip, point](const Model& m, Data& d, const State& s) {
                      computeOperationalSpaceInertia(m, d, s.q, tip, point);
                    }});
  }
  return list;
}

TEST(DataLayout, EachFunctionWritesExactlyTheResultsItsGroupNames) {
  std::vector<testing::Robot> robots = testing::randomRobots({1, 3, 7, 12, 30});
  for (testing::Robot& r : testing::namedRobots()) robots.push_back(std::move(r));
  std::map<std::string, std::set<std::string>> changed_somewhere;  // call -> fields it changed on some robot
  std::map<std::string, std::set<std::string>> documented;
  int checked = 0;
  for (const testing::Robot& robot : robots) {
    const Model& model = robot.model;
    std::mt19937 rng(11u + static_cast<std::uint32_t>(model.n));
    const State first = randomState(model, rng);
    const State second = randomState(model, rng);
    const std::vector<Call> list = calls(model);
    for (const Call& call : list) {
      Data data(model);
      for (const Call& c : list) c.run(model, data, first);  // every result holds the first state's values
      const Fields before = results(data);
      call.run(model, data, second);
      const Fields after = results(data);
      documented[call.name] = call.writes;
      for (const auto& [field, values] : before) {
        if (after.at(field) == values) continue;
        changed_somewhere[call.name].insert(field);
        EXPECT_TRUE(call.writes.count(field) != 0)
            << robot.name << ": " << call.name << " wrote the result " << field
            << ", which data.hpp does not name among its writes";
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 9 * 24 + 6);  // 9 robots, 24 calls, and the task inertia on the 6 with n >= 6
  // and every documented write happens on some robot (a field can stay put on one: rho of a chain without
  // prismatic joints, p0 of a one-joint chain, M and U of the routes above kDenseUDUMaxDof)
  for (const auto& [name, writes] : documented) {
    for (const std::string& field : writes) {
      EXPECT_TRUE(changed_somewhere[name].count(field) != 0)
          << name << " never wrote " << field << ", which data.hpp names among its writes";
    }
  }
}

}  // namespace
}  // namespace denoc
