// Regenerates the data of the papers' simulation figures (Saha 1999, section 6) as CSV files:
//   planar_free_fall.csv       the 3-DOF planar arm of planarArmDH() falling from rest at theta = 0 for 10 s
//                              (Fig. 6): t, q1..q3 (rad), qd1..qd3 (rad/s), kinetic, potential, energy (J)
//   stanford_eq39_torques.csv  the Stanford arm of Table 3 along the eq. 39 trajectory (Fig. 8):
//                              t, q1..q6, tau1..tau6 (N m; joint 3: m and N)
//   stanford_free_fall.csv     the Stanford arm falling from rest at the eq. 39 start pose for 10 s (Fig. 9):
//                              t, q1..q6, energy
// Usage: denoc_paper_figures OUTDIR          writes the CSV files into OUTDIR (which must exist)
//        denoc_paper_figures --bench         measures simulation steps per second for 7-DOF chains
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "denoc/denoc.hpp"
#include "denoc/simulate.hpp"
#include "denoc/trajectory.hpp"

#if __has_include("bench/models.hpp")
#include "bench/models.hpp"
#define DENOC_HAVE_BENCH_MODELS 1
#endif

namespace {

using namespace denoc;

std::ofstream openCsv(const std::string& dir, const std::string& name) {
  std::ofstream out(dir + "/" + name);
  if (!out) throw std::runtime_error("cannot write " + dir + "/" + name);
  out.precision(10);
  return out;
}

double maxDrift(const SimulationResult& r) {
  return (r.energy.array() - r.energy[0]).abs().maxCoeff() / r.kinetic.maxCoeff();
}

void planarFreeFall(const std::string& dir) {
  const Model model = buildModelFromDH(planarArmDH());
  SimulationOptions o;
  o.t_end = 10.0;
  o.dt_out = 0.01;
  o.rtol = 1e-10;
  o.atol = 1e-10;
  const SimulationResult r = simulate(model, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o);
  std::ofstream out = openCsv(dir, "planar_free_fall.csv");
  out << "t,q1,q2,q3,qd1,qd2,qd3,kinetic,potential,energy\n";
  for (Eigen::Index k = 0; k < r.t.size(); ++k) {
    out << r.t[k];
    for (int j = 0; j < 3; ++j) out << ',' << r.q(k, j);
    for (int j = 0; j < 3; ++j) out << ',' << r.qd(k, j);
    out << ',' << r.kinetic[k] << ',' << r.potential[k] << ',' << r.energy[k] << '\n';
  }
  std::printf(
      "planar_free_fall.csv: %ld samples, %ld steps (%ld rejected), energy drift %.2e of max kinetic\n",
      static_cast<long>(r.t.size()), static_cast<long>(r.stats.steps), static_cast<long>(r.stats.rejected),
      maxDrift(r));
}

void stanfordTorques(const std::string& dir) {
  const Model model = buildModelFromDH(stanfordArmDH());
  const TorqueHistory h = computeTorqueHistory(model, stanfordEq39Trajectory(), uniformTimes(10.0, 0.01));
  std::ofstream out = openCsv(dir, "stanford_eq39_torques.csv");
  out << "t,q1,q2,q3,q4,q5,q6,tau1,tau2,tau3,tau4,tau5,tau6\n";
  for (Eigen::Index k = 0; k < h.t.size(); ++k) {
    out << h.t[k];
    for (int j = 0; j < 6; ++j) out << ',' << h.q(k, j);
    for (int j = 0; j < 6; ++j) out << ',' << h.tau(k, j);
    out << '\n';
  }
  std::printf("stanford_eq39_torques.csv: %ld samples\n", static_cast<long>(h.t.size()));
}

void stanfordFreeFall(const std::string& dir) {
  const Model model = buildModelFromDH(stanfordArmDH());
  const CycloidalTrajectory traj = stanfordEq39Trajectory();
  SimulationOptions o;
  o.t_end = 10.0;
  o.dt_out = 0.01;
  o.rtol = 1e-10;
  o.atol = 1e-10;
  const SimulationResult r = simulate(model, traj.start(), Eigen::VectorXd::Zero(6), o);
  std::ofstream out = openCsv(dir, "stanford_free_fall.csv");
  out << "t,q1,q2,q3,q4,q5,q6,energy\n";
  for (Eigen::Index k = 0; k < r.t.size(); ++k) {
    out << r.t[k];
    for (int j = 0; j < 6; ++j) out << ',' << r.q(k, j);
    out << ',' << r.energy[k] << '\n';
  }
  std::printf("stanford_free_fall.csv: %ld samples, %ld steps, energy drift %.2e of max kinetic\n",
              static_cast<long>(r.t.size()), static_cast<long>(r.stats.steps), maxDrift(r));
}

/// A 7-DOF chain: the Stanford arm of Table 3 with a seventh revolute (roll) joint and a small tool link.
DHSpec stanford7DH() {
  DHSpec dh = stanfordArmDH();
  dh.name = "stanford_7dof";
  DHLink l;
  l.type = JointType::Revolute;
  l.b = 0.08;
  l.mass = 0.3;
  l.com = Eigen::Vector3d(0.0, 0.0, -0.03);
  l.inertia = Eigen::Vector3d(0.0004, 0.0004, 0.0002).asDiagonal();
  dh.links.push_back(l);
  return dh;
}

void measure(const char* name, const Model& model) {
  Simulator sim(model);
  Eigen::VectorXd q0 = Eigen::VectorXd::Constant(model.n, 0.3);
  const Eigen::VectorXd qd0 = Eigen::VectorXd::Zero(model.n);
  {
    // forwardDynamics alone, for the integrator's overhead
    Data data(model);
    Eigen::VectorXd qd = Eigen::VectorXd::Constant(model.n, 0.1), tau = Eigen::VectorXd::Zero(model.n);
    const int reps = 200000;
    double best = 1e300, sink = 0.0;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) {
        qd[0] = 1e-9 * i;
        sink += forwardDynamics(model, data, q0, qd, tau)[0];
      }
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("%-14s n=%d forwardDynamics alone: %.2f us per call (checksum %g)\n", name, model.n,
                1e6 * best / reps, sink);
  }
  for (Integrator integrator : {Integrator::RK4, Integrator::DormandPrince45}) {
    SimulationOptions o;
    o.integrator = integrator;
    o.t_end = 10.0;
    o.dt_out = 0.1;  // few samples: the steps dominate
    o.step = 1e-4;   // RK4: 100000 steps
    o.rtol = 1e-9;
    o.atol = 1e-9;
    o.damping = Eigen::VectorXd::Constant(model.n, 0.5);
    // best of 3 runs
    double best = 1e300;
    SimulationStats stats;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      stats = sim.run(q0, qd0, o, {});
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
    }
    const double steps = static_cast<double>(stats.steps + stats.rejected);
    std::printf(
        "%-14s n=%d %-16s %8ld steps in %.3f s: %10.0f steps/s, %10.0f FD evaluations/s (%.2f us each)\n",
        name, model.n, integrator == Integrator::RK4 ? "RK4 h=1e-4" : "DOPRI5 tol=1e-9",
        static_cast<long>(steps), best, steps / best, static_cast<double>(stats.evaluations) / best,
        1e6 * best / static_cast<double>(stats.evaluations));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help") {
    std::cerr << "usage: " << argv[0] << " OUTDIR   (write the figure data as CSV files into OUTDIR)\n"
              << "       " << argv[0] << " --bench  (measure simulation steps per second, 7-DOF chains)\n";
    return 2;
  }
  try {
    const std::string arg = argv[1];
    if (arg == "--bench") {
      measure("stanford_7dof", buildModelFromDH(stanford7DH()));
#ifdef DENOC_HAVE_BENCH_MODELS
      measure("panda", buildModel(bench::pandaSpec()));
#endif
      return 0;
    }
    planarFreeFall(arg);
    stanfordTorques(arg);
    stanfordFreeFall(arg);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
