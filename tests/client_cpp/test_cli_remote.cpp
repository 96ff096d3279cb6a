// The `denoc` tool as a client (`denoc --server HOST:PORT ...`), run as a process against a real denocd on
// 127.0.0.1: register -> id -> fd -> factor, JSON output equal to the core in-process; list, get, delete;
// remote simulate equal to the core's simulator; errors with exit codes and the server's message; a floating
// Solo-12's derivatives and rollouts with --wrench against the core.
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "denoc/denoc.hpp"
#include "server/server_process.hpp"
#include "server/test_support.hpp"
#include "support/run_process.hpp"

namespace denoc {
namespace {

using nlohmann::json;
using test::ServerProcess;
using test::TempDir;

const std::string kPanda = std::string(DENOC_MODELS_DIR) + "/panda_hand.urdf";
const std::string kPlanar = std::string(DENOC_SOURCE_DIR) + "/examples/models/planar_3r.json";

using Outcome = testing::ProcessOutcome;

Outcome denoc(const TempDir& dir, const std::vector<std::string>& args) {
  static int counter = 0;
  return testing::runProcess(DENOC_CLI, args, dir.str("run" + std::to_string(counter++)));
}

json parse(const Outcome& r) {
  EXPECT_EQ(r.code, 0) << r.err;
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.out;
    return json::object();
  }
}

Eigen::VectorXd vec(const json& a) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(a.size()));
  for (std::size_t i = 0; i < a.size(); ++i) v[static_cast<Eigen::Index>(i)] = a[i].get<double>();
  return v;
}

Eigen::MatrixXd mat(const json& a) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(a.size()), static_cast<Eigen::Index>(a.at(0).size()));
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < a[i].size(); ++j)
      m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = a[i][j];
  }
  return m;
}

::testing::AssertionResult close(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want,
                                 double tol = 1e-12) {
  if (got.rows() != want.rows() || got.cols() != want.cols()) return ::testing::AssertionFailure() << "shape";
  const double err = (got - want).cwiseAbs().maxCoeff();
  if (err <= tol * std::max(1.0, want.cwiseAbs().maxCoeff())) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max error " << err << "\ngot\n" << got << "\nwant\n" << want;
}

TEST(CliRemote, RegisterIdFdFactorEqualTheCore) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const std::string s = "--server=" + server.address();
  UrdfOptions uo;
  uo.tip_link = "panda_hand_tcp";
  const Model model = buildModelFromUrdfFile(kPanda, uo);
  Data data(model);

  const Outcome reg = denoc(dir, {s, "register", kPanda, "--tip-link", "panda_hand_tcp", "--quiet"});
  ASSERT_EQ(reg.code, 0) << reg.err;
  const std::string id = reg.out.substr(0, reg.out.find('\n'));
  ASSERT_EQ(id.size(), 64u) << reg.out;
  const json again =
      parse(denoc(dir, {s, "register", kPanda, "--tip-link", "panda_hand_tcp", "--format", "json"}));
  EXPECT_EQ(again.at("model_id"), id);
  EXPECT_EQ(again.at("created"), false);
  EXPECT_EQ(again.at("model").at("dof"), 7);

  // three states in a JSON file
  const std::vector<double> q = test::randomStates(3, 7, 1), qd = test::randomStates(3, 7, 2),
                            x = test::randomStates(3, 7, 3, 4.0);
  json states = json::array();
  for (int k = 0; k < 3; ++k) {
    const auto row = [&](const std::vector<double>& v) {
      return std::vector<double>(v.begin() + k * 7, v.begin() + k * 7 + 7);
    };
    states.push_back({{"q", row(q)}, {"qd", row(qd)}, {"qdd", row(x)}, {"tau", row(x)}});
  }
  const std::string file = dir.str("states.json");
  std::ofstream(file) << states.dump();

  const json id_doc = parse(denoc(dir, {s, "id", id, "--states", file, "--format", "json"}));
  EXPECT_EQ(id_doc.at("model_id"), id);
  EXPECT_EQ(id_doc.at("dof"), 7);
  EXPECT_EQ(id_doc.at("gravity"), json::parse("[0.0, 0.0, -9.81]"));
  EXPECT_GT(id_doc.at("compute_time_ns").get<long long>(), 0);
  ASSERT_EQ(id_doc.at("states").size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const Eigen::Map<const Eigen::VectorXd> qk(&q[k * 7], 7), qdk(&qd[k * 7], 7), xk(&x[k * 7], 7);
    const json& st = id_doc["states"][static_cast<std::size_t>(k)];
    EXPECT_TRUE(close(vec(st.at("tau")), inverseDynamics(model, data, qk, qdk, xk))) << k;
    EXPECT_TRUE(close(vec(st.at("q")), qk, 0.0));
  }
  // the model file instead of the id (registered first, same id); a unique id prefix
  const json by_file = parse(
      denoc(dir, {s, "id", kPanda, "--tip-link", "panda_hand_tcp", "--states", file, "--format", "json"}));
  EXPECT_EQ(by_file.at("model_id"), id);
  EXPECT_EQ(by_file.at("states"), id_doc.at("states"));

  for (const char* route : {"saha", "fixman", "cholesky"}) {
    const json fd = parse(
        denoc(dir, {s, "fd", id.substr(0, 10), "--states", file, "--route", route, "--format", "json"}));
    ASSERT_EQ(fd.at("states").size(), 3u);
    for (int k = 0; k < 3; ++k) {
      const Eigen::Map<const Eigen::VectorXd> qk(&q[k * 7], 7), qdk(&qd[k * 7], 7), xk(&x[k * 7], 7);
      const Eigen::VectorXd want = std::string(route) == "saha" ? forwardDynamics(model, data, qk, qdk, xk)
                                   : std::string(route) == "fixman"
                                       ? forwardDynamicsFixman(model, data, qk, qdk, xk)
                                       : forwardDynamicsCholesky(model, data, qk, qdk, xk);
      EXPECT_TRUE(close(vec(fd["states"][static_cast<std::size_t>(k)].at("qdd")), want)) << route << " " << k;
    }
  }

  const Eigen::Map<const Eigen::VectorXd> q0(&q[0], 7);
  std::string qlist;
  for (int j = 0; j < 7; ++j) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%s%.17g", j ? "," : "", q[static_cast<std::size_t>(j)]);
    qlist += buf;
  }
  const json f = parse(denoc(dir, {s, "factor", id, "--q=" + qlist, "--inverse", "--format", "json"}));
  const json& st = f.at("states").at(0);
  computeFullFactor(model, data, q0);
  EXPECT_TRUE(close(mat(st.at("I")), data.M));
  EXPECT_TRUE(close(mat(st.at("U")), data.U));
  EXPECT_TRUE(close(vec(st.at("D")), data.D));
  EXPECT_NEAR(st.at("log_det").get<double>(), data.log_det, 1e-12 * std::abs(data.log_det));
  EXPECT_TRUE(close(mat(st.at("I_inv")), computeInverseInertia(model, data, q0)));

  // table output names the server's model id
  const Outcome table = denoc(dir, {s, "id", id, "--q=" + qlist});
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find(id), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("panda_joint7"), std::string::npos) << table.out;

  // list, get, delete
  const json list = parse(denoc(dir, {s, "list", "--format", "json"}));
  EXPECT_EQ(list.size(), 3u);  // two built-in examples and the Panda
  const json get = parse(denoc(dir, {s, "get", id, "--format", "json"}));
  EXPECT_EQ(get.at("joints").size(), 7u);
  EXPECT_EQ(get.at("source"), "urdf");
  const Outcome del = denoc(dir, {s, "delete", id});
  EXPECT_EQ(del.code, 0) << del.err;
  const Outcome gone = denoc(dir, {s, "id", id, "--q=" + qlist});
  EXPECT_EQ(gone.code, 2);
  EXPECT_NE(gone.err.find("NOT_FOUND"), std::string::npos) << gone.err;
  // the server's message: deleted (its tombstone), so the CLI's client did not register it again
  EXPECT_NE(gone.err.find("was deleted (DeleteModel)"), std::string::npos) << gone.err;
  EXPECT_EQ(parse(denoc(dir, {s, "list", "--format", "json"})).size(), 2u);
}

TEST(CliRemote, SimulateEqualsTheCoresSimulator) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const Outcome r = denoc(dir, {"--server", server.address(), "simulate", kPlanar, "--t-end", "2", "--dt-out",
                                "0.1", "--q0=0.3,-0.2,0.1", "--batch-size", "4"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "t,q0,q1,q2,qd0,qd1,qd2,energy");
  SimulationOptions o;
  o.t_end = 2;
  o.dt_out = 0.1;
  const SimulationResult want =
      simulate(buildModelFromDH(planarArmDH()), Eigen::Vector3d(0.3, -0.2, 0.1), Eigen::Vector3d::Zero(), o);
  Eigen::Index k = 0;
  while (std::getline(in, line)) {
    std::vector<double> v;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 8u);
    ASSERT_LT(k, want.t.size());
    EXPECT_EQ(v[0], want.t[k]);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(v[1 + j], want.q(k, j), 1e-12) << k;
    EXPECT_NEAR(v[7], want.energy[k], 1e-12);
    ++k;
  }
  EXPECT_EQ(k, 21);
  // the built-in model by name gives the same run
  const Outcome by_name = denoc(dir, {"--server", server.address(), "simulate", "planar_3r", "--t-end", "2",
                                      "--dt-out", "0.1", "--q0=0.3,-0.2,0.1"});
  EXPECT_EQ(by_name.out, r.out);
}

TEST(CliRemote, BenchTimesTheRequestedCalls) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const std::string s = "--server=" + server.address();
  const Outcome r = denoc(dir, {s, "bench", "planar_3r", "--computation", "fd", "--calls", "40", "--batch",
                                "25", "--format", "json"});
  const json doc = parse(r);
  EXPECT_EQ(doc.at("computation"), "fd");
  EXPECT_EQ(doc.at("calls"), 40);
  EXPECT_EQ(doc.at("states_per_call"), 25);
  EXPECT_LE(doc.at("p50_us").get<double>(), doc.at("p99_us").get<double>());
  EXPECT_LE(doc.at("p99_us").get<double>(), doc.at("max_us").get<double>());
  EXPECT_GT(doc.at("states_per_s").get<double>(), 0.0);
  EXPECT_GT(doc.at("server_compute_us_per_state").get<double>(), 0.0);
  // no progress line when standard error is not a terminal
  EXPECT_TRUE(r.err.empty()) << r.err;
  const Outcome zero = denoc(dir, {s, "bench", "planar_3r", "--batch", "0"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("--batch"), std::string::npos) << zero.err;
  const Outcome local = denoc(dir, {"bench", kPlanar});
  EXPECT_EQ(local.code, 2);
  EXPECT_NE(local.err.find("needs a server"), std::string::npos) << local.err;
}

// docs/cli.md: the server options may come before or after the command
TEST(CliRemote, ServerOptionsMayFollowTheCommand) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const json before = parse(denoc(dir, {"--server", server.address(), "list", "--format", "json"}));
  const json after = parse(denoc(dir, {"list", "--server", server.address(), "--format", "json"}));
  EXPECT_EQ(before.size(), 2u);  // the built-in examples
  EXPECT_EQ(after, before);
  EXPECT_EQ(parse(denoc(dir, {"get", "planar_3r", "--format", "json", "--server=" + server.address(),
                              "--deadline", "10"}))
                .at("dof"),
            3);

  // a computation with the options last equals the core in-process
  const Model model = buildModelFromDH(stanfordArmDH());
  Data data(model);
  const Eigen::VectorXd q = (Eigen::VectorXd(6) << 0.1, 0.7, 0.05, -0.4, 0.9, 0.2).finished();
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(6);
  const json doc = parse(denoc(dir, {"id", "stanford_arm", "--q=0.1,0.7,0.05,-0.4,0.9,0.2", "--format",
                                     "json", "--server", server.address(), "--deadline", "10"}));
  ASSERT_EQ(doc.at("states").size(), 1u);
  EXPECT_TRUE(close(vec(doc["states"][0].at("tau")), inverseDynamics(model, data, q, zero, zero)));

  // an option nobody knows is still refused, wherever it stands
  const Outcome bad = denoc(dir, {"list", "--server", server.address(), "--no-such-option"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--no-such-option"), std::string::npos) << bad.err;
}

TEST(CliRemote, ErrorsGiveExitCodesAndTheServersMessage) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const std::string s = "--server=" + server.address();
  const std::string bad = dir.str("bad.urdf");
  std::ofstream(bad) << "<robot name='x'><link name='a'/><joint name='j' type='revolute'>";
  const Outcome r = denoc(dir, {s, "register", bad});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("RegisterModel: INVALID_ARGUMENT"), std::string::npos) << r.err;
  const Outcome wrong = denoc(dir, {s, "id", "stanford_arm", "--q=1,2,3"});
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("--q: 3 entries, expected 6"), std::string::npos) << wrong.err;
  const Outcome unknown = denoc(dir, {s, "get", "no_such_model"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("`denoc list` shows the"), std::string::npos) << unknown.err;
  const Outcome typo = denoc(dir, {s, "id", "stanfrd_arm", "--q=0,0,0,0,0,0"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("did you mean 'stanford_arm'"), std::string::npos) << typo.err;
  const Outcome pinned = denoc(dir, {s, "delete", "stanford_arm"});
  EXPECT_NE(pinned.code, 0);
  EXPECT_FALSE(pinned.err.empty());
  // a person's targets: no port, a URL; rollout --linearize without JSON (A and B would be dropped)
  const Outcome portless = denoc(dir, {"--server", "127.0.0.1", "list"});
  EXPECT_EQ(portless.code, 2);
  EXPECT_NE(portless.err.find("--server 127.0.0.1 has no port: give HOST:PORT"), std::string::npos)
      << portless.err;
  const Outcome url = denoc(dir, {"--server", "http://" + server.address(), "list"});
  EXPECT_EQ(url.code, 2);
  EXPECT_NE(url.err.find("not a URL: --server " + server.address()), std::string::npos) << url.err;
  const Outcome linear = denoc(dir, {s, "rollout", "stanford_arm", "--steps", "2", "--linearize"});
  EXPECT_EQ(linear.code, 2);
  EXPECT_NE(linear.err.find("add --format json"), std::string::npos) << linear.err;
  // --name on a model registered before under another name: a note, not silence
  const std::string ur5 = std::string(DENOC_MODELS_DIR) + "/ur5.urdf";
  ASSERT_EQ(denoc(dir, {s, "register", ur5, "--name", "first", "-q"}).code, 0);
  const Outcome renamed = denoc(dir, {s, "register", ur5, "--name", "second", "-q"});
  EXPECT_EQ(renamed.code, 0);
  EXPECT_NE(renamed.err.find("registered before as 'first'"), std::string::npos) << renamed.err;
  // a simulation the server refuses (more steps than max_steps) writes no CSV header
  const Outcome refused = denoc(dir, {s, "simulate", "stanford_arm", "--t-end", "1e6", "--integrator", "rk4",
                                      "--step", "1e-3", "--no-progress"});
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_NE(refused.err.find("max_steps"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out, "");
  // no server there: UNAVAILABLE after the bounded retries, exit code 1
  const Outcome down = denoc(dir, {"--server", "127.0.0.1:1", "--deadline", "2", "list"});
  EXPECT_EQ(down.code, 1);
  EXPECT_NE(down.err.find("UNAVAILABLE"), std::string::npos) << down.err;
}

// ------------------------------------------------------------------------------ trees and moving roots

std::string csvList(const Eigen::VectorXd& v) {
  std::string out;
  char buf[40];
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    out += (i ? "," : "") + std::string(buf);
  }
  return out;
}

TEST(CliRemote, TreesRegisterFloatingAndAnswerWithTheTreeShapes) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const std::string s = "--server=" + server.address();
  const std::string solo = std::string(DENOC_MODELS_DIR) + "/trees/solo12.urdf";
  UrdfOptions uo;
  uo.root = RootJoint::Floating;
  const Model model = buildModelFromUrdfFile(solo, uo);
  Data data(model);

  const Outcome reg = denoc(dir, {s, "register", solo, "--floating", "--name", "solo", "--quiet"});
  ASSERT_EQ(reg.code, 0) << reg.err;
  const std::string id = reg.out.substr(0, reg.out.find('\n'));
  ASSERT_EQ(id.size(), 64u) << reg.out;
  // the tree from ModelInfo
  const json info = parse(denoc(dir, {s, "get", id, "--format", "json"}));
  EXPECT_EQ(info.at("nq"), model.nq);
  EXPECT_EQ(info.at("nv"), model.nv);
  EXPECT_EQ(info.at("nu"), model.nu);
  EXPECT_EQ(info.at("root"), "floating");
  EXPECT_EQ(info.at("root_joint").at("nq"), 7);
  ASSERT_EQ(info.at("joints").size(), static_cast<std::size_t>(model.n));
  for (int i = 0; i < model.n; ++i) {
    const json& j = info["joints"][static_cast<std::size_t>(i)];
    EXPECT_EQ(j.at("q_index"), model.nqr + i);
    EXPECT_EQ(j.at("v_index"), model.nr + i);
    const int p = model.parent[static_cast<std::size_t>(i)];
    EXPECT_EQ(j.at("parent"),
              p < 0 ? std::string("root_joint") : model.spec.joints[static_cast<std::size_t>(p)].name);
  }
  const Outcome table = denoc(dir, {s, "get", "solo"});
  ASSERT_EQ(table.code, 0) << table.err;
  for (const char* want : {"nq 19, nv 18, nu 12", "root_joint", "0..6", "    FL_HFE"}) {
    EXPECT_NE(table.out.find(want), std::string::npos) << want << "\n" << table.out;
  }

  // inverse dynamics with a wrench on a foot, by name
  std::mt19937_64 rng(5);
  const Eigen::VectorXd q = randomConfiguration(model, rng);
  const Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(model.nv, -0.5, 0.7);
  const Eigen::VectorXd a = Eigen::VectorXd::LinSpaced(model.nv, 1.0, -1.2);
  Eigen::Matrix<double, 6, 1> w;
  w << 0.1, -0.2, 0.05, 2.0, -1.0, 11.0;
  const json id_doc =
      parse(denoc(dir, {s, "id", "solo", "--q=" + csvList(q), "--qd=" + csvList(v), "--qdd=" + csvList(a),
                        "--wrench=FL_LOWER_LEG:" + csvList(w) + ":local", "--format", "json"}));
  std::vector<ExternalWrench> core(1);
  core[0].frame = frameIndex(model, "FL_LOWER_LEG");
  core[0].wrench = w;
  core[0].reference = ReferenceFrame::Local;
  EXPECT_EQ(id_doc.at("nq"), model.nq);
  EXPECT_TRUE(close(vec(id_doc.at("states").at(0).at("tau")), inverseDynamics(model, data, q, v, a, core)));
  const json fd_doc =
      parse(denoc(dir, {s, "fd", "solo", "--q=" + csvList(q), "--qd=" + csvList(v), "--tau=" + csvList(a),
                        "--wrench=FL_LOWER_LEG:" + csvList(w) + ":local", "--format", "json"}));
  EXPECT_TRUE(
      close(vec(fd_doc.at("states").at(0).at("qdd")), forwardDynamics(model, data, q, v, a, core), 1e-9));

  // fk of the four feet at once, and the centre of mass
  const json fk = parse(
      denoc(dir, {s, "fk", "solo", "--q=" + csvList(q), "--link", "FL_LOWER_LEG", "--link", "FR_LOWER_LEG",
                  "--link", "HL_LOWER_LEG", "--link", "HR_LOWER_LEG", "--com", "--format", "json"}));
  const json& st = fk.at("states").at(0);
  for (const char* link : {"FL_LOWER_LEG", "FR_LOWER_LEG", "HL_LOWER_LEG", "HR_LOWER_LEG"}) {
    Eigen::Matrix3d R;
    Eigen::Vector3d p;
    framePlacement(model, data, q, frameIndex(model, link), R, p);
    EXPECT_TRUE(close(vec(st.at(std::string("origin ") + link)), p)) << link;
    EXPECT_TRUE(close(mat(st.at(std::string("rotation ") + link)), R)) << link;
  }
  EXPECT_TRUE(close(vec(st.at("com")), computeCenterOfMass(model, data, q)));

  // the Jacobian of a foot (6 x nv) and derivatives (nv x nv)
  const json jac = parse(
      denoc(dir, {s, "jacobian", "solo", "--q=" + csvList(q), "--link", "HR_LOWER_LEG", "--format", "json"}));
  EXPECT_TRUE(close(
      mat(jac.at("states").at(0).at("jacobian")),
      computeFrameJacobian(model, data, q, frameIndex(model, "HR_LOWER_LEG"), Eigen::Vector3d::Zero())));
  const json der = parse(denoc(dir, {s, "derivatives", "solo", "--q=" + csvList(q), "--qd=" + csvList(v),
                                     "--qdd=" + csvList(a), "--format", "json"}));
  computeInverseDynamicsDerivatives(model, data, q, v, a);
  EXPECT_TRUE(close(mat(der.at("states").at(0).at("dtau_dq")), data.dtau_dq));
  EXPECT_TRUE(close(mat(der.at("states").at(0).at("dtau_dqd")), data.dtau_dqd));

  // a rollout: states of nq + nv, the torques of the nu joints
  const Outcome roll = denoc(dir, {s, "rollout", "solo", "--steps", "3", "--dt", "0.01", "--q0=" + csvList(q),
                                   "--tau=" + csvList(Eigen::VectorXd::Constant(model.nu, 0.2))});
  ASSERT_EQ(roll.code, 0) << roll.err;
  EXPECT_NE(roll.out.find(",q18,qd0,"), std::string::npos) << roll.out;
  EXPECT_NE(roll.out.find(",qd17\n"), std::string::npos) << roll.out;
  RolloutWorkspace ws(model);
  RolloutOptions ro;
  ro.step = 0.01;
  ro.steps = 3;
  Eigen::VectorXd x0(model.nq + model.nv);
  x0 << q, Eigen::VectorXd::Zero(model.nv);
  const Eigen::VectorXd u = Eigen::VectorXd::Constant(3 * model.nu, 0.2);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> states(4, model.nq + model.nv);
  rollout(model, ws, ro, x0.data(), u.data(), states.data());
  std::istringstream lines(roll.out);
  std::string line;
  std::getline(lines, line);  // header
  for (int t = 0; t <= 3; ++t) {
    ASSERT_TRUE(std::getline(lines, line));
    std::vector<double> cells;
    std::stringstream cs(line);
    for (std::string cell; std::getline(cs, cell, ',');) cells.push_back(std::stod(cell));
    ASSERT_EQ(cells.size(), static_cast<std::size_t>(1 + model.nq + model.nv));
    EXPECT_TRUE(close(Eigen::Map<const Eigen::VectorXd>(cells.data() + 1, model.nq + model.nv),
                      states.row(t).transpose()))
        << "step " << t;
  }

  // hostile: a missing link in a wrench, a zero quaternion, nq entries counted
  Eigen::VectorXd q0 = q;
  q0.segment(3, 4).setZero();
  const Outcome bad_link = denoc(dir, {s, "id", "solo", "--wrench=NO_SUCH_LINK:0,0,0,0,0,1"});
  EXPECT_EQ(bad_link.code, 2);
  EXPECT_NE(bad_link.err.find("NO_SUCH_LINK"), std::string::npos) << bad_link.err;
  const Outcome bad_q = denoc(dir, {s, "id", "solo", "--q=" + csvList(q0)});
  EXPECT_EQ(bad_q.code, 2);
  EXPECT_NE(bad_q.err.find("q"), std::string::npos) << bad_q.err;
  const Outcome short_q = denoc(dir, {s, "id", "solo", "--q=" + csvList(q.head(model.nv))});
  EXPECT_EQ(short_q.code, 2);
  EXPECT_NE(short_q.err.find("expected 19"), std::string::npos) << short_q.err;

  // a simulation (RK4 on the manifold): samples of nq + nv, the first the initial state
  const Outcome sim = denoc(dir, {s, "simulate", "solo", "--integrator", "rk4", "--t-end", "0.02", "--dt-out",
                                  "0.01", "--q0=" + csvList(q), "--no-progress"});
  ASSERT_EQ(sim.code, 0) << sim.err;
  std::istringstream sim_lines(sim.out);
  std::string header;
  std::getline(sim_lines, header);
  EXPECT_NE(header.find(",q18,qd0,"), std::string::npos) << header;
  EXPECT_NE(header.find(",qd17,energy"), std::string::npos) << header;
  std::getline(sim_lines, line);
  std::vector<double> first;
  std::stringstream fs(line);
  for (std::string cell; std::getline(fs, cell, ',');) first.push_back(std::stod(cell));
  ASSERT_EQ(first.size(), static_cast<std::size_t>(1 + model.nq + model.nv + 1));
  EXPECT_TRUE(close(Eigen::Map<const Eigen::VectorXd>(first.data() + 1, model.nq), q));
  // bench with random states of the tree (unit quaternions)
  const json bench = parse(
      denoc(dir, {s, "bench", "solo", "--calls", "3", "--batch", "2", "--format", "json", "--no-progress"}));
  EXPECT_EQ(bench.at("calls"), 3);

  // the server's limits
  const json limits = parse(denoc(dir, {s, "info", "--format", "json"}));
  EXPECT_GT(limits.at("max_depth").get<int>(), 0);
  EXPECT_GT(limits.at("max_wrenches").get<int>(), 0);
  EXPECT_GT(limits.at("max_frames").get<int>(), 0);
}

TEST(CliRemote, DerivativesAndRolloutTakeWrenches) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const std::string s = "--server=" + server.address();
  const std::string solo = std::string(DENOC_MODELS_DIR) + "/trees/solo12.urdf";
  UrdfOptions uo;
  uo.root = RootJoint::Floating;
  const Model model = buildModelFromUrdfFile(solo, uo);
  Data data(model);
  ASSERT_EQ(denoc(dir, {s, "register", solo, "--floating", "--name", "solo", "--quiet"}).code, 0);
  std::mt19937_64 rng(9);
  const Eigen::VectorXd q = randomConfiguration(model, rng);
  const Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(model.nv, -0.4, 0.6);
  const Eigen::VectorXd a = Eigen::VectorXd::LinSpaced(model.nv, 0.8, -1.1);
  Eigen::Matrix<double, 6, 1> w0, w1;
  w0 << 0.1, -0.2, 0.05, 2.0, -1.0, 11.0;  // on a foot (a fixed frame), world axes
  w1 << -0.3, 0.1, 0.2, 1.0, 3.0, -2.0;    // on a lower leg, its axes
  const std::vector<std::string> wrenches = {"--wrench=FL_FOOT:" + csvList(w0),
                                             "--wrench=HR_LOWER_LEG:" + csvList(w1) + ":local"};
  std::vector<ExternalWrench> core(2);
  for (const FixedFrameSpec& f : model.spec.fixed_frames) {
    if (f.name != "FL_FOOT") continue;
    core[0].frame = f.joint;
    core[0].point = f.origin;
  }
  core[0].wrench = w0;
  core[0].reference = ReferenceFrame::Base;
  core[1].frame = frameIndex(model, "HR_LOWER_LEG");
  core[1].wrench = w1;
  core[1].reference = ReferenceFrame::Local;
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), wrenches.begin(), wrenches.end());
    return args;
  };
  const json id = parse(denoc(dir, with({s, "derivatives", "solo", "--q=" + csvList(q), "--qd=" + csvList(v),
                                         "--qdd=" + csvList(a), "--format", "json"})));
  computeInverseDynamicsDerivatives(model, data, q, v, a, core);
  EXPECT_TRUE(close(mat(id.at("states").at(0).at("dtau_dq")), data.dtau_dq));
  EXPECT_TRUE(close(mat(id.at("states").at(0).at("dtau_dqd")), data.dtau_dqd));
  EXPECT_TRUE(close(vec(id.at("states").at(0).at("tau")), inverseDynamics(model, data, q, v, a, core)));
  const json fd = parse(denoc(dir, with({s, "derivatives", "solo", "--of", "fd", "--q=" + csvList(q),
                                         "--qd=" + csvList(v), "--tau=" + csvList(a), "--format", "json"})));
  computeForwardDynamicsDerivatives(model, data, q, v, a, core);
  EXPECT_TRUE(close(mat(fd.at("states").at(0).at("dqdd_dq")), data.dqdd_dq, 1e-10));
  EXPECT_TRUE(close(mat(fd.at("states").at(0).at("dqdd_dtau")), data.Minv, 1e-10));
  EXPECT_TRUE(close(vec(fd.at("states").at(0).at("qdd")), data.qdd, 1e-10));

  // a rollout under the wrenches, with its linearization
  const Eigen::VectorXd tau = Eigen::VectorXd::Constant(model.nu, 0.2);
  const json roll = parse(
      denoc(dir, with({s, "rollout", "solo", "--steps", "3", "--dt", "0.01", "--q0=" + csvList(q),
                       "--qd0=" + csvList(v), "--tau=" + csvList(tau), "--linearize", "--format", "json"})));
  RolloutWorkspace ws(model);
  RolloutOptions ro;
  ro.step = 0.01;
  ro.steps = 3;
  Eigen::VectorXd x0(model.nq + model.nv);
  x0 << q, v;
  const Eigen::VectorXd u = tau.replicate(3, 1);
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowMajor states(4, model.nq + model.nv), plain(4, model.nq + model.nv);
  std::vector<double> A(3u * 36u * 36u), B(3u * 36u * 12u);
  rollout(model, ws, ro, x0.data(), u.data(), states.data(), A.data(), B.data(), nullptr, core.data(), 2);
  EXPECT_TRUE(close(mat(roll.at("states")), states));
  for (int t = 0; t < 3; ++t) {
    const auto ut = static_cast<std::size_t>(t);
    EXPECT_TRUE(close(mat(roll.at("A").at(ut)), Eigen::Map<const RowMajor>(A.data() + ut * 36 * 36, 36, 36)));
    EXPECT_TRUE(close(mat(roll.at("B").at(ut)), Eigen::Map<const RowMajor>(B.data() + ut * 36 * 12, 36, 12)));
  }
  rollout(model, ws, ro, x0.data(), u.data(), plain.data());
  EXPECT_FALSE(close(mat(roll.at("states")), plain, 1e-9));  // the wrenches act

  // a missing link, named, in both commands
  for (const char* command : {"derivatives", "rollout"}) {
    const Outcome bad = denoc(dir, {s, command, "solo", "--wrench=NO_SUCH_FOOT:0,0,0,0,0,1"});
    EXPECT_EQ(bad.code, 2) << command;
    EXPECT_NE(bad.err.find("NO_SUCH_FOOT"), std::string::npos) << command << ": " << bad.err;
  }
}

}  // namespace
}  // namespace denoc
