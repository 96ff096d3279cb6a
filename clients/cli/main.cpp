// denoc: the command-line tool. Runs the dynamics of a model file locally (a server backend comes later).
// Exit codes: 0 success, 2 bad input (options, model or states files), 1 anything else.
#include <CLI/CLI.hpp>
#include <Eigen/Cholesky>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <numbers>
#include <optional>

#include "cli_common.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"

#ifndef DENOC_EXAMPLES_DIR
#define DENOC_EXAMPLES_DIR "examples/models"
#endif

namespace {

using namespace denoc;
using namespace denoc::cli;

struct Options {
  std::string model;
  std::string format = "table";
  std::string base_link, tip_link;
  std::string q, qd, qdd, tau, states;
  std::string route = "saha";
  bool inverse = false;
  std::string demo_model;
  double demo_t = 2.5;
};

void addModel(CLI::App* sub, Options& o) {
  sub->add_option("MODEL", o.model, "model file: .json (denoc-dh/1, docs/model-format.md) or .urdf")
      ->required();
  sub->add_option("--format", o.format, "output: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--base-link", o.base_link, "URDF only: base link of the chain (default: the root)");
  sub->add_option("--tip-link", o.tip_link, "URDF only: tip link of the chain (default: the single leaf)");
}

void addStates(CLI::App* sub, Options& o, unsigned fields) {
  const char* list = " (comma-separated, one per joint; default zeros; write --q=-1,2 for a leading minus)";
  if ((fields & kQ) != 0u) sub->add_option("--q", o.q, std::string("joint positions, rad or m") + list);
  if ((fields & kQd) != 0u)
    sub->add_option("--qd", o.qd, std::string("joint velocities, rad/s or m/s") + list);
  if ((fields & kQdd) != 0u) {
    sub->add_option("--qdd", o.qdd, std::string("joint accelerations, rad/s^2 or m/s^2") + list);
  }
  if ((fields & kTau) != 0u)
    sub->add_option("--tau", o.tau, std::string("joint torques/forces, N m or N") + list);
  sub->add_option("--states", o.states,
                  "file of states instead of the options: CSV with a header naming the columns (q0.., qd0.., "
                  "qdd0.., tau0..) or .json: [{\"q\": [...], \"qd\": [...], ...}, ...]");
}

Model load(const Options& o) {
  UrdfOptions urdf;
  urdf.base_link = o.base_link;
  urdf.tip_link = o.tip_link;
  return loadModel(o.model, urdf);
}

std::vector<State> states(const Options& o, const Model& model, unsigned fields) {
  const int n = model.n;
  if (!o.states.empty()) {
    if (!o.q.empty() || !o.qd.empty() || !o.qdd.empty() || !o.tau.empty()) {
      throw InputError("--states cannot be combined with --q, --qd, --qdd or --tau");
    }
    return readStates(o.states, n, fields, std::cerr);
  }
  State s;
  s.q = vectorOption(o.q, n, "--q");
  s.qd = vectorOption(o.qd, n, "--qd");
  s.qdd = vectorOption(o.qdd, n, "--qdd");
  s.tau = vectorOption(o.tau, n, "--tau");
  return {s};
}

// The trajectory of Saha 1999 eq. 39 at time t (T = 10 s): revolute joints from 0 to 60 deg (joint 2 from
// 90 deg), prismatic joints from 0 to 0.1 m, theta(t) = theta0 + (thetaT - theta0) / (2 pi)
// (2 pi t / T - sin(2 pi t / T)).
State eq39State(const Model& model, double t) {
  constexpr double T = 10.0;
  constexpr double deg = std::numbers::pi / 180.0;
  const double w = 2.0 * std::numbers::pi / T;
  State s;
  s.q = s.qd = s.qdd = s.tau = Eigen::VectorXd::Zero(model.n);
  for (int i = 0; i < model.n; ++i) {
    const bool revolute = model.type[static_cast<std::size_t>(i)] == JointType::Revolute;
    const double start = revolute && i == 1 ? 90.0 * deg : 0.0;
    const double end = revolute ? 60.0 * deg : 0.1;
    const double delta = end - start;
    s.q[i] = start + delta / (2.0 * std::numbers::pi) * (w * t - std::sin(w * t));
    s.qd[i] = delta / T * (1.0 - std::cos(w * t));
    s.qdd[i] = delta / T * w * std::sin(w * t);
  }
  return s;
}

int runDemo(const Options& o) {
  const std::string path =
      o.demo_model.empty() ? std::string(DENOC_EXAMPLES_DIR) + "/stanford_arm.json" : o.demo_model;
  if (o.demo_model.empty() && !std::filesystem::exists(path)) {
    throw InputError("the example model " + path + " is not there; give one with --model");
  }
  if (!std::isfinite(o.demo_t)) throw InputError("--t: expected a finite time");
  const Model model = loadModel(path);
  Data data(model);
  const State s = eq39State(model, o.demo_t);
  std::ostream& out = std::cout;
  const Eigen::Vector3d& g = model.gravity;
  out << "denoc demo: model '" << model.spec.name << "', " << model.n << " joints, from " << path << "\n";
  out << "gravity [" << g[0] << ", " << g[1] << ", " << g[2] << "] m/s^2 in the base frame\n";
  out << "state: the trajectory of Saha 1999 eq. 39 at t = " << o.demo_t
      << " s of T = 10 s (revolute joints 0 -> 60 deg, joint 2 from 90 deg; prismatic 0 -> 0.1 m)\n\n";

  out << "Inverse dynamics: the torques/forces that produce qdd at (q, qd)\n";
  const Result id = computeInverseDynamics(model, data, s);
  writeJointTable(out, model, id.vectors);
  const Eigen::VectorXd tau = id.vectors.back().value;

  out << "\nForward dynamics with tau = 0: accelerations under gravity alone at (q, qd)\n";
  State fall = s;
  fall.tau.setZero();
  const Eigen::VectorXd qdd_saha = forwardDynamics(model, data, fall.q, fall.qd, fall.tau);
  const Eigen::VectorXd qdd_chol = forwardDynamicsCholesky(model, data, fall.q, fall.qd, fall.tau);
  writeJointTable(out, model,
                  {{"", "qdd, O(n) DeNOC", Quantity::Acceleration, qdd_saha},
                   {"", "qdd, dense Cholesky", Quantity::Acceleration, qdd_chol}});
  const Eigen::VectorXd back = forwardDynamics(model, data, s.q, s.qd, tau);
  out << "check: forward dynamics of the torques above gives back qdd, max |error| = "
      << (back - s.qdd).cwiseAbs().maxCoeff() << "\n\n";

  out << "Full factor at q: I = U D U^T\n";
  const Result f = computeFactor(model, data, s, false);
  writeJointTable(out, model, {f.vectors[1]});
  for (const Result::Matrix& m : f.matrices) {
    out << '\n';
    writeMatrix(out, m);
  }
  const Eigen::MatrixXd& I = f.matrices[0].value;
  const Eigen::LLT<Eigen::MatrixXd> llt(I);
  const double dense = 2.0 * llt.matrixL().toDenseMatrix().diagonal().array().log().sum();
  out << "\nlog det I = " << f.scalars[0].value << " (sum of log D; dense Cholesky of I: " << dense << ")\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "denoc: rigid-body dynamics of robot manipulators by the decoupled natural orthogonal complement"};
  app.require_subcommand(1);

  CLI::App* info = app.add_subcommand("info", "joints, types, masses and limits of a model");
  addModel(info, o);

  CLI::App* id = app.add_subcommand("id", "inverse dynamics: tau = I(q) qdd + C(q, qd) qd + g(q)");
  addModel(id, o);
  addStates(id, o, kQ | kQd | kQdd);

  CLI::App* fd = app.add_subcommand("fd", "forward dynamics: qdd = I(q)^-1 (tau - C(q, qd) qd - g(q))");
  addModel(fd, o);
  addStates(fd, o, kQ | kQd | kTau);
  fd->add_option("--route", o.route, "saha: the O(n) DeNOC route (default); cholesky: the dense O(n^3) route")
      ->check(CLI::IsMember({"saha", "cholesky"}));

  CLI::App* factor = app.add_subcommand("factor", "the full factor at q: I, U, D (I = U D U^T), log det I");
  addModel(factor, o);
  addStates(factor, o, kQ);
  factor->add_flag("--inverse", o.inverse, "also I(q)^-1");

  CLI::App* demo =
      app.add_subcommand("demo", "the Stanford arm of Saha 1999 at a state of its eq. 39 trajectory");
  demo->add_option("--model", o.demo_model,
                   "another model file instead of examples/models/stanford_arm.json");
  demo->add_option("--t", o.demo_t, "time on the trajectory, s (default 2.5)");

  if (argc > 1 && argv[1][0] != '-') {  // CLI11 would only say that a subcommand is required
    const std::string command = argv[1];
    const auto subs = app.get_subcommands([](CLI::App*) { return true; });
    if (std::none_of(subs.begin(), subs.end(), [&](CLI::App* a) { return a->get_name() == command; })) {
      std::cerr << "denoc: error: unknown command '" << command
                << "' (expected info, id, fd, factor or demo; "
                << "see denoc --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help (rc 0) or the error
    return rc == 0 ? 0 : 2;
  }

  try {
    if (demo->parsed()) return runDemo(o);
    const Format format = parseFormat(o.format);
    const Model model = load(o);
    if (info->parsed()) {
      writeInfo(std::cout, model, o.model, format);
      return 0;
    }
    Data data(model);
    std::vector<Result> results;
    if (id->parsed()) {
      for (const State& s : states(o, model, kQ | kQd | kQdd))
        results.push_back(computeInverseDynamics(model, data, s));
      writeResults(std::cout, model, "id", results, format);
    } else if (fd->parsed()) {
      for (const State& s : states(o, model, kQ | kQd | kTau)) {
        results.push_back(computeForwardDynamics(model, data, s, o.route == "cholesky"));
      }
      writeResults(std::cout, model, "fd", results, format);
    } else if (factor->parsed()) {
      for (const State& s : states(o, model, kQ)) results.push_back(computeFactor(model, data, s, o.inverse));
      writeResults(std::cout, model, "factor", results, format);
    }
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "denoc: error: cannot write the output\n";
      return 1;
    }
    return 0;
  } catch (const InputError& e) {
    std::cerr << "denoc: error: " << e.what() << '\n';
    return 2;
  } catch (const std::invalid_argument& e) {  // ModelError and the algorithms' argument checks
    std::cerr << "denoc: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "denoc: internal error: " << e.what() << '\n';
    return 1;
  }
}
