// denoc: the command-line tool. Runs the dynamics of a model file locally, or on a denocd server with
// --server HOST:PORT (through the denoc::client library).
// Exit codes: 0 success, 2 bad input (options, model or states files, or a request the server refused as
// such), 1 anything else (including a server that cannot be reached).
#include <CLI/CLI.hpp>
#include <Eigen/Cholesky>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <numbers>
#include <optional>

#include "commands.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/client/client.hpp"
#include "suggest.hpp"

#ifndef DENOC_EXAMPLES_DIR
#define DENOC_EXAMPLES_DIR "examples/models"
#endif

namespace {

using namespace denoc;
using namespace denoc::cli;

// --root and --floating: the joint between the world and a URDF's base link.
void addRoot(CLI::App* sub, Options& o) {
  sub->add_option(
         "--root", o.root,
         "URDF only: how the base link moves: fixed (default), floating (q: x y z qx qy qz qw first, qd: "
         "wx wy wz vx vy vz in the base link's axes) or planar (x y yaw first)")
      ->check(CLI::IsMember({"fixed", "floating", "planar"}));
  sub->add_flag("--floating", o.floating, "URDF only: the same as --root floating");
}

// --wrench, repeatable: external wrenches on named frames.
void addWrenches(CLI::App* sub, Options& o) {
  sub->add_option("--wrench", o.wrenches,
                  "an external wrench on a frame: LINK:mx,my,mz,fx,fy,fz (LINK a link name, the root link's, "
                  "or tip; the moment about the frame's origin; world axes, or frame axes with a trailing "
                  ":local); repeatable")
      ->allow_extra_args(false);
}

void addModel(CLI::App* sub, Options& o) {
  sub->add_option("MODEL", o.model, "model file: .json (denoc-dh/1, docs/model-format.md) or .urdf")
      ->required();
  sub->add_option("--format", o.format, "output: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  sub->add_option("--base-link", o.base_link, "URDF only: base link of the chain (default: the root)");
  sub->add_option("--tip-link", o.tip_link, "URDF only: tip link of the chain (default: the whole robot)");
  addRoot(sub, o);
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

// The example models: installed beside the program (PREFIX/share/denoc/models for PREFIX/bin/denoc), else
// those of the source tree it was built from.
std::string examplesDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "denoc" / "models";
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return DENOC_EXAMPLES_DIR;
}

int runDemo(const Options& o) {
  const std::string path = o.demo_model.empty() ? examplesDir() + "/stanford_arm.json" : o.demo_model;
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

/// The options on the command line that neither the program nor its command knows, each said with the nearest
/// known names ("unknown option --tip_link for denoc info (did you mean '--tip-link'?)"); false when every
/// option is known (what CLI11 refused is then an extra argument, which its own message says).
bool sayUnknownOptions(CLI::App& app, int argc, char** argv) {
  CLI::App* command = nullptr;
  std::vector<std::string> known;
  const auto collect = [&known](const CLI::App* a) {
    for (const CLI::Option* opt : a->get_options()) {
      for (const std::string& n : opt->get_lnames()) known.push_back("--" + n);
      for (const std::string& n : opt->get_snames()) known.push_back("-" + n);
    }
  };
  collect(&app);
  for (CLI::App* sub : app.get_subcommands([](CLI::App* a) { return a->parsed(); })) {
    command = sub;
    collect(sub);
  }
  bool said = false;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--") break;
    // an option's name, not a negative number (a value such as -0.5 or -1e-3)
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.')
      continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::cerr << "denoc: error: unknown option " << name << " for denoc"
              << (command ? " " + command->get_name() : std::string()) << didYouMean(name, known)
              << "; see denoc" << (command ? " " + command->get_name() : std::string()) << " --help\n";
    said = true;
  }
  return said;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "denoc: rigid-body dynamics of robot manipulators by the decoupled natural orthogonal complement"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("denoc ") + denoc::version(), "print the version and exit");
  // options a command does not know go to the tool (--server and the TLS options after the command); the
  // commands inherit this when they are added, so it comes first
  app.fallthrough();

  CLI::App* info = app.add_subcommand("info", "joints, types, masses and limits of a model");
  addModel(info, o);
  // with --server and no MODEL: the server's version and limits
  info->get_option("MODEL")->required(false)->description(
      "model file: .json (denoc-dh/1) or .urdf; none with --server: the server's version and limits");

  CLI::App* id = app.add_subcommand("id", "inverse dynamics: tau = I(q) qdd + C(q, qd) qd + g(q)");
  addModel(id, o);
  addStates(id, o, kQ | kQd | kQdd);
  addWrenches(id, o);

  CLI::App* fd = app.add_subcommand("fd", "forward dynamics: qdd = I(q)^-1 (tau - C(q, qd) qd - g(q))");
  addModel(fd, o);
  addStates(fd, o, kQ | kQd | kTau);
  addWrenches(fd, o);
  fd->add_option("--route", o.route,
                 "saha: the O(n) DeNOC route (default); fixman: Fixman's O(n) inversion; cholesky: the dense "
                 "O(n^3) route")
      ->check(CLI::IsMember({"saha", "fixman", "cholesky"}));

  CLI::App* factor = app.add_subcommand("factor", "the full factor at q: I, U, D (I = U D U^T), log det I");
  addModel(factor, o);
  addStates(factor, o, kQ);
  factor->add_flag("--inverse", o.inverse, "also I(q)^-1");

  CLI::App* demo =
      app.add_subcommand("demo", "the Stanford arm of Saha 1999 at a state of its eq. 39 trajectory");
  demo->add_option("--model", o.demo_model,
                   "another model file instead of examples/models/stanford_arm.json");
  demo->add_option("--t", o.demo_t, "time on the trajectory, s (default 2.5)");

  CLI::App* simulate = app.add_subcommand(
      "simulate", "integrate the equations of motion from (q0, qd0); CSV out: t, q0.., qd0.., energy");
  simulate->add_option("MODEL", o.model, "model file (.json or .urdf); with --server also a model id or name")
      ->required();
  simulate->add_option("--base-link", o.base_link, "URDF only: base link of the chain");
  simulate->add_option("--tip-link", o.tip_link, "URDF only: tip link of the chain");
  addRoot(simulate, o);
  simulate->add_option("--t-end", o.t_end, "end time, s (default 1)");
  simulate->add_option("--dt-out", o.dt_out, "time between samples, s (default 0.01)");
  simulate
      ->add_option("--integrator", o.integrator,
                   "dopri: adaptive Dormand-Prince 5(4) (default); rk4: fixed step")
      ->check(CLI::IsMember({"dopri", "rk4"}));
  simulate->add_option("--step", o.step, "rk4 step, s (default 1e-3)");
  simulate->add_option("--rtol", o.rtol, "dopri relative tolerance (default 1e-8)");
  simulate->add_option("--atol", o.atol, "dopri absolute tolerance (default 1e-10)");
  simulate
      ->add_option("--route", o.route, "forward dynamics inside the integrator: saha (default) or cholesky")
      ->check(CLI::IsMember({"saha", "cholesky"}));
  simulate->add_option("--q0", o.q0, "initial positions (comma-separated, default zeros)");
  simulate->add_option("--qd0", o.qd0, "initial velocities (comma-separated, default zeros)");
  simulate->add_option("--tau", o.tau, "constant joint torques/forces (comma-separated, default zero)");
  simulate->add_option("--tau-schedule", o.tau_schedule,
                       "local only: piecewise-linear torques from a CSV file with the header t,tau0,..");
  simulate->add_option("--damping", o.damping,
                       "viscous joint damping per joint (comma-separated, default none)");
  simulate->add_option("--batch-size", o.batch_size,
                       "with --server: samples per streamed message (default 64)");
  simulate->add_flag("!--no-progress", o.progress, "no progress line on a terminal");

  CLI::App* torques =
      app.add_subcommand("torques", "joint torques along a trajectory (CSV: t, q0.., qd0.., qdd0.., tau0..)");
  torques->add_option("MODEL", o.model, "model file (.json or .urdf)")->required();
  torques->add_option("--base-link", o.base_link, "URDF only: base link of the chain");
  torques->add_option("--tip-link", o.tip_link, "URDF only: tip link of the chain");
  torques->add_option(
      "--trajectory", o.trajectory,
      "eq39 (default): Saha 1999 eq. 39 (the Stanford arm's; any model: revolute joints 0 -> 60 "
      "deg, joint 2 from 90 deg, prismatic 0 -> 0.1 m, T = 10 s), or a JSON file "
      "{\"duration\": T, \"start\": [...], \"end\": [...]} of a cycloidal trajectory");
  torques->add_option("--dt", o.dt, "time between samples, s (default 0.1)");
  torques->add_option("--t-end", o.torques_t_end, "last sample time, s (default: the trajectory's duration)");

  // remote-only commands
  CLI::App* reg = app.add_subcommand("register", "with --server: register a model file, print its id");
  reg->add_option("MODEL", o.model, "model file: .json (denoc-dh/1) or .urdf")->required();
  reg->add_option("--base-link", o.base_link, "URDF only: base link of the chain");
  reg->add_option("--tip-link", o.tip_link, "URDF only: tip link of the chain (default: the whole robot)");
  addRoot(reg, o);
  reg->add_option("--name", o.name, "display name (default: the file's)");
  reg->add_option("--gravity", o.gravity,
                  "gravity x,y,z in the base frame, m/s^2 (default: the file's, or 0,0,-9.81)");
  reg->add_flag("--quiet,-q", o.quiet, "print the id only");
  reg->add_option("--format", o.format, "output: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  CLI::App* list = app.add_subcommand("list", "with --server: the models on the server");
  list->add_option("--format", o.format, "output: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  CLI::App* get =
      app.add_subcommand("get", "with --server: describe a model (id, unique id prefix, or name)");
  get->add_option("MODEL", o.model, "model id, unique id prefix (6+ digits), name, or a model file")
      ->required();
  addRoot(get, o);
  get->add_option("--format", o.format, "output: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  CLI::App* del = app.add_subcommand("delete", "with --server: delete a model");
  del->add_option("MODEL", o.model, "model id, unique id prefix (6+ digits) or name")->required();
  del->add_option("--format", o.format, "output: table (default) or json")
      ->check(CLI::IsMember({"table", "json", "csv"}));

  // planning (remote only)
  const char* model_help = "model id, unique id prefix (6+ digits), name, or a model file";
  CLI::App* fk = app.add_subcommand("fk", "with --server: pose of a link frame (rotation, origin) per state");
  CLI::App* jacobian = app.add_subcommand(
      "jacobian", "with --server: Jacobian [angular; linear] of a point on a link per state");
  fk->add_option(
        "--link", o.links,
        "a frame: a link name, the root link's or tip (default: the tip frame); repeat it for several "
        "frames at once (four feet)")
      ->allow_extra_args(false);
  fk->add_flag("--com", o.com, "also the centre of mass (world) and the total mass");
  jacobian->add_option("--link", o.link,
                       "a frame: a link name, the root link's or tip (default: the tip frame)");
  jacobian->add_flag(
      "--com", o.com,
      "also the centre of mass's Jacobian (3 x nv) and the centroidal momentum matrix A_G (6 x nv)");
  for (CLI::App* sub : {fk, jacobian}) {
    sub->add_option("MODEL", o.model, model_help)->required();
    sub->add_option("--format", o.format, "output: table (default), json or csv")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    addStates(sub, o, kQ);
    addRoot(sub, o);
  }
  jacobian->add_option("--point", o.point, "x,y,z of the point in the link's frame, m (default its origin)");
  jacobian->add_flag("--local", o.local, "in the link frame's axes (default: the base frame's)");
  CLI::App* derivatives = app.add_subcommand(
      "derivatives",
      "with --server: analytic derivatives of ID (dtau/dq, dtau/dqd) or FD (dqdd/dq, dqdd/dqd, "
      "dqdd/dtau) per state");
  derivatives->add_option("MODEL", o.model, model_help)->required();
  derivatives->add_option("--of", o.of, "id (default) or fd")->check(CLI::IsMember({"id", "fd"}));
  derivatives->add_option("--format", o.format, "output: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  addStates(derivatives, o, kQ | kQd | kQdd | kTau);
  addRoot(derivatives, o);
  addWrenches(derivatives, o);
  CLI::App* rollout = app.add_subcommand(
      "rollout", "with --server: a fixed-step rollout under constant torques; CSV out: step, q0.., qd0..");
  rollout->add_option("MODEL", o.model, model_help)->required();
  rollout->add_option("--q0", o.q0,
                      "initial positions, nq (comma-separated, default zeros; a floating root upright at the "
                      "origin)");
  rollout->add_option("--qd0", o.qd0, "initial velocities, nv (comma-separated, default zeros)");
  rollout->add_option("--tau", o.tau,
                      "constant torques/forces of the nu actuated joints (comma-separated, default zero)");
  addRoot(rollout, o);
  addWrenches(rollout, o);  // held over the whole rollout
  rollout->add_option("--steps", o.steps, "steps T (default 100)");
  rollout->add_option("--dt", o.dt, "step, s (default 0.1; give e.g. 0.001)");
  rollout->add_option("--scheme", o.scheme, "rk4 (default) or euler (semi-implicit)")
      ->check(CLI::IsMember({"rk4", "euler"}));
  rollout->add_flag("--linearize", o.linearize, "also A_t and B_t per step (--format json)");
  rollout->add_option("--format", o.format, "output: csv (default) or json")
      ->check(CLI::IsMember({"table", "json", "csv"}));

  CLI::App* bench =
      app.add_subcommand("bench", "with --server: time calls of one computation (latency, states/s)");
  bench->add_option("MODEL", o.model, "model id, unique id prefix (6+ digits), name, or a model file")
      ->required();
  bench->add_option("--computation", o.bench_computation, "id (default) or fd")
      ->check(CLI::IsMember({"id", "fd"}));
  bench->add_option("--calls", o.bench_calls, "number of timed calls (default 1000)");
  bench->add_option("--batch", o.bench_batch, "states per call (default 1)");
  bench->add_option("--format", o.format, "output: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  bench->add_flag("!--no-progress", o.progress, "no progress line on a terminal");
  addRoot(bench, o);

  // the server, for every command that can run remotely (before or after the command)
  app.add_option("--server", o.server,
                 "HOST:PORT of a denocd: register, list, get, delete, id, fd, factor and simulate run there "
                 "(MODEL may then be a model id or name; a model file is registered first)")
      ->envname("DENOC_SERVER");
  app.add_option("--deadline", o.deadline_s, "with --server: seconds per call (default 30)");
  app.add_option("--lb-policy", o.lb_policy,
                 "with --server: gRPC load balancing, round_robin or pick_first (default: round_robin for "
                 "dns:/// and ipv4:/ipv6: targets, which may name several servers)")
      ->check(CLI::IsMember({"round_robin", "pick_first"}));
  app.add_flag("--tls", o.tls, "with --server: TLS with the system's root certificates");
  app.add_option("--tls-ca", o.tls_ca, "with --server: TLS, trusting the CA certificates in this PEM file");
  app.add_option("--tls-cert", o.tls_cert, "with --server: client certificate (PEM) for mutual TLS");
  app.add_option("--tls-key", o.tls_key, "with --server: client private key (PEM) for mutual TLS");
  app.add_option(
      "--tls-server-name", o.tls_server_name,
      "with --server: TLS, accepting a server certificate issued for this name (e.g. localhost when "
      "dialling 127.0.0.1)");
  app.add_option("--token", o.token, "with --server: bearer token")->envname("DENOC_TOKEN");
  app.add_option("--token-file", o.token_file,
                 "with --server: read the bearer token from this file (the token alone; keeps it out of the "
                 "process list)");

  if (argc > 1 && argv[1][0] != '-') {  // CLI11 would only say that a subcommand is required
    const std::string command = argv[1];
    const auto subs = app.get_subcommands([](CLI::App*) { return true; });
    if (std::none_of(subs.begin(), subs.end(), [&](CLI::App* a) { return a->get_name() == command; })) {
      std::cerr
          << "denoc: error: unknown command '" << command
          << "' (expected info, id, fd, factor, simulate, torques, demo, or with --server register, list, "
             "get, delete, bench, fk, jacobian, derivatives, rollout; "
          << "see denoc --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) && sayUnknownOptions(app, argc, argv)) return 2;
    const int rc = app.exit(e);  // prints help (rc 0) or the error
    return rc == 0 ? 0 : 2;
  }

  try {
    if (demo->parsed()) return runDemo(o);
    if (torques->parsed()) return runTorques(o);
    const bool remote_only = reg->parsed() || list->parsed() || get->parsed() || del->parsed() ||
                             bench->parsed() || fk->parsed() || jacobian->parsed() || derivatives->parsed() ||
                             rollout->parsed();
    if (info->parsed() && o.model.empty()) {
      if (o.server.empty())
        throw InputError("info needs MODEL (or --server HOST:PORT for the server's limits)");
      return runRemote(o, "info");
    }
    if (!o.server.empty() && !info->parsed()) {
      for (CLI::App* sub :
           {reg, list, get, del, id, fd, factor, simulate, bench, fk, jacobian, derivatives, rollout}) {
        if (sub->parsed()) return runRemote(o, sub->get_name());
      }
    }
    if (remote_only) throw InputError("this command needs a server: denoc --server HOST:PORT ...");
    if (simulate->parsed()) return runSimulate(o);
    const Format format = parseFormat(o.format);
    const Model model = loadModel(o);
    if (info->parsed()) {
      writeInfo(std::cout, model, o.model, format);
      return 0;
    }
    Data data(model);
    std::vector<Result> results;
    const std::vector<ExternalWrench> wrenches = wrenchOptions(o, model);
    if (id->parsed()) {
      for (const State& s : readStateOptions(o, model, kQ | kQd | kQdd))
        results.push_back(computeInverseDynamics(model, data, s, wrenches));
      writeResults(std::cout, model, "id", results, format);
    } else if (fd->parsed()) {
      for (const State& s : readStateOptions(o, model, kQ | kQd | kTau)) {
        results.push_back(computeForwardDynamics(model, data, s, o.route, wrenches));
      }
      writeResults(std::cout, model, "fd", results, format);
    } else if (factor->parsed()) {
      for (const State& s : readStateOptions(o, model, kQ))
        results.push_back(computeFactor(model, data, s, o.inverse));
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
  } catch (const denoc::client::Error& e) {
    // the server names the request's fields; the options that set them are named beside them
    std::string message = e.what();
    for (const auto& [field, flag] : {std::pair<std::string, std::string>{"urdf.tip_link", "--tip-link"},
                                      {"urdf.base_link", "--base-link"}}) {
      if (const std::size_t at = message.find(field); at != std::string::npos)
        message.insert(at + field.size(), " (" + flag + ")");
    }
    std::cerr << "denoc: error: " << message << '\n';
    switch (e.code()) {
      case grpc::StatusCode::INVALID_ARGUMENT:
      case grpc::StatusCode::NOT_FOUND:
      case grpc::StatusCode::FAILED_PRECONDITION:
      case grpc::StatusCode::OUT_OF_RANGE:
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        return 2;
      default:
        return 1;
    }
  } catch (const std::invalid_argument& e) {  // ModelError and the algorithms' argument checks
    std::cerr << "denoc: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "denoc: internal error: " << e.what() << '\n';
    return 1;
  }
}
