// The `denoc` command-line tool, run as a separate process: its JSON and CSV output must match the core
// library called in-process on the built-in models, states files must be read row by row, and bad input
// must give exit code 2 with a message on stderr.
// Oracle: the core library called in-process.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <Eigen/Geometry>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "denoc/denoc.hpp"
#include "denoc/urdf.hpp"
#include "support/run_process.hpp"

namespace denoc {
namespace {

using nlohmann::json;
using Vector6d = Eigen::Matrix<double, 6, 1>;

const std::string kModels = std::string(DENOC_SOURCE_DIR) + "/examples/models/";
const std::string kStanford = kModels + "stanford_arm.json";
const std::string kPlanar = kModels + "planar_3r.json";

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("denoc_cli_" + std::to_string(std::random_device{}()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }

 private:
  std::filesystem::path path_;
};

using Outcome = testing::ProcessOutcome;

Outcome denoc(const std::vector<std::string>& args) {
  static int counter = 0;
  TempDir dir;
  return testing::runProcess(DENOC_CLI, args, dir.path("run" + std::to_string(counter++)));
}

std::string list(const Eigen::VectorXd& v) {
  std::string s;
  char buf[40];
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.17g", v[i]);
    if (i > 0) s += ',';
    s += buf;
  }
  return s;
}

Eigen::VectorXd vec(const json& a) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(a.size()));
  for (std::size_t i = 0; i < a.size(); ++i) v[static_cast<Eigen::Index>(i)] = a[i].get<double>();
  return v;
}

Eigen::MatrixXd mat(const json& a) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(a.size()), static_cast<Eigen::Index>(a.at(0).size()));
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < a[i].size(); ++j) {
      m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = a[i][j].get<double>();
    }
  }
  return m;
}

::testing::AssertionResult close(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want,
                                 double tol = 1e-12) {
  if (got.rows() != want.rows() || got.cols() != want.cols()) {
    return ::testing::AssertionFailure()
           << "shape " << got.rows() << "x" << got.cols() << " vs " << want.rows() << "x" << want.cols();
  }
  const double err = (got - want).cwiseAbs().maxCoeff();
  if (err <= tol * std::max(1.0, want.cwiseAbs().maxCoeff())) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max error " << err << "\ngot\n" << got << "\nwant\n" << want;
}

struct Fixture {
  Model model = buildModelFromDH(stanfordArmDH());
  Data data{model};
  Eigen::VectorXd q, qd, qdd;
  explicit Fixture(unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.5, 1.5);
    q = Eigen::VectorXd::NullaryExpr(model.n, [&] { return u(rng); });
    qd = Eigen::VectorXd::NullaryExpr(model.n, [&] { return u(rng); });
    qdd = Eigen::VectorXd::NullaryExpr(model.n, [&] { return u(rng); });
  }
};

json parseJson(const Outcome& r) {
  EXPECT_EQ(r.code, 0) << r.err;
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "output is not JSON: " << e.what() << "\n" << r.out;
    return json::object();
  }
}

TEST(Cli, InverseDynamicsJsonMatchesTheCore) {
  Fixture f(1);
  const json doc = parseJson(denoc({"id", kStanford, "--q=" + list(f.q), "--qd=" + list(f.qd),
                                    "--qdd=" + list(f.qdd), "--format", "json"}));
  ASSERT_EQ(doc.at("states").size(), 1u);
  EXPECT_EQ(doc.at("dof"), 6);
  EXPECT_EQ(doc.at("model"), "stanford_arm");
  EXPECT_EQ(doc.at("gravity"), json::parse("[0.0, 0.0, -9.81]"));  // the gravity used, echoed
  const json& s = doc["states"][0];
  EXPECT_TRUE(close(vec(s.at("q")), f.q, 0.0));  // echoed exactly
  EXPECT_TRUE(close(vec(s.at("tau")), inverseDynamics(f.model, f.data, f.q, f.qd, f.qdd)));
}

TEST(Cli, ForwardDynamicsJsonMatchesTheCoreOnBothRoutes) {
  Fixture f(2);
  const Eigen::VectorXd tau = f.qdd * 3.0;  // any torques
  for (const char* route : {"saha", "cholesky"}) {
    const json doc = parseJson(denoc({"fd", kStanford, "--q=" + list(f.q), "--qd=" + list(f.qd),
                                      "--tau=" + list(tau), "--route", route, "--format", "json"}));
    const Eigen::VectorXd want = forwardDynamicsCholesky(f.model, f.data, f.q, f.qd, tau);
    EXPECT_TRUE(close(vec(doc.at("states").at(0).at("qdd")), want, 1e-10)) << route;
  }
  // the default is the O(n) route: identical numbers to the core's forwardDynamics
  const json doc = parseJson(denoc(
      {"fd", kStanford, "--q=" + list(f.q), "--qd=" + list(f.qd), "--tau=" + list(tau), "--format", "json"}));
  EXPECT_TRUE(close(vec(doc["states"][0]["qdd"]), forwardDynamics(f.model, f.data, f.q, f.qd, tau)));
}

TEST(Cli, FactorJsonMatchesTheCore) {
  Fixture f(3);
  const json doc =
      parseJson(denoc({"factor", kStanford, "--q=" + list(f.q), "--inverse", "--format", "json"}));
  const json& s = doc.at("states").at(0);
  const Eigen::MatrixXd I = computeInertiaMatrix(f.model, f.data, f.q);
  EXPECT_TRUE(close(mat(s.at("I")), I));
  computeFullFactor(f.model, f.data, f.q);
  EXPECT_TRUE(close(mat(s.at("U")), f.data.U));
  EXPECT_TRUE(close(vec(s.at("D")), f.data.D));
  // independent of the UDU^T route: a dense factorization of I
  EXPECT_NEAR(s.at("log_det").get<double>(), std::log(I.determinant()), 1e-10);
  const Eigen::MatrixXd U = mat(s["U"]);
  EXPECT_TRUE(close(U * vec(s["D"]).asDiagonal() * U.transpose(), I, 1e-12));
  EXPECT_TRUE(close(mat(s.at("I_inv")), I.inverse(), 1e-8));
}

TEST(Cli, CsvStatesFileWithThreeStates) {
  TempDir dir;
  std::vector<Fixture> fs = {Fixture(11), Fixture(12), Fixture(13)};
  std::string csv = "# three states of the Stanford arm\n";
  for (const char* g : {"q", "qd", "qdd"}) {
    for (int i = 0; i < 6; ++i)
      csv += std::string(g == std::string("q") && i == 0 ? "" : ",") + g + std::to_string(i);
  }
  csv += "\n";
  for (const Fixture& f : fs) csv += list(f.q) + "," + list(f.qd) + "," + list(f.qdd) + "\n";
  const std::string path = dir.write("states.csv", csv);

  const Outcome r = denoc({"id", kStanford, "--states", path, "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("q0,q1,q2,q3,q4,q5,qd0,", 0), 0u) << line;
  EXPECT_NE(line.find(",tau5"), std::string::npos) << line;
  int k = 0;
  while (std::getline(in, line)) {
    ASSERT_LT(k, 3);
    std::vector<double> v;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 24u);
    Fixture& f = fs[static_cast<std::size_t>(k)];
    const Eigen::Map<const Eigen::VectorXd> all(v.data(), 24);
    EXPECT_TRUE(close(all.segment(0, 6), f.q, 0.0));
    EXPECT_TRUE(close(all.segment(18, 6), inverseDynamics(f.model, f.data, f.q, f.qd, f.qdd)))
        << "state " << k;
    ++k;
  }
  EXPECT_EQ(k, 3);

  // the same file for forward dynamics: the qdd columns are not used (a note), tau defaults to zero
  const Outcome fd = denoc({"fd", kStanford, "--states", path, "--format", "json"});
  const json doc = parseJson(fd);
  EXPECT_NE(fd.err.find("not used"), std::string::npos) << fd.err;
  ASSERT_EQ(doc.at("states").size(), 3u);
  for (std::size_t s = 0; s < 3; ++s) {
    Fixture& f = fs[s];
    EXPECT_TRUE(close(vec(doc["states"][s]["qdd"]),
                      forwardDynamics(f.model, f.data, f.q, f.qd, Eigen::VectorXd::Zero(6))));
  }
}

TEST(Cli, JsonStatesFile) {
  TempDir dir;
  Fixture a(21), b(22);
  json states = json::array();
  states.push_back({{"q", std::vector<double>(a.q.data(), a.q.data() + 6)},
                    {"qd", std::vector<double>(a.qd.data(), a.qd.data() + 6)},
                    {"qdd", std::vector<double>(a.qdd.data(), a.qdd.data() + 6)}});
  states.push_back(
      {{"q", std::vector<double>(b.q.data(), b.q.data() + 6)}});  // qd = qdd = 0: gravity torques
  const std::string path = dir.write("states.json", states.dump());
  const json doc = parseJson(denoc({"id", kStanford, "--states", path, "--format", "json"}));
  ASSERT_EQ(doc.at("states").size(), 2u);
  EXPECT_TRUE(close(vec(doc["states"][0]["tau"]), inverseDynamics(a.model, a.data, a.q, a.qd, a.qdd)));
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(6);
  EXPECT_TRUE(close(vec(doc["states"][1]["tau"]), inverseDynamics(b.model, b.data, b.q, zero, zero)));
}

TEST(Cli, PlanarArmGravityTorquesInClosedForm) {
  // independent oracle: static torques of the planar 3R arm, g along -Y, mass centers at mid-length
  const double q[3] = {0.3, -0.7, 1.1};
  const json doc = parseJson(denoc({"id", kPlanar, "--q=0.3,-0.7,1.1", "--format", "json"}));
  const double l[3] = {0.3, 0.25, 0.2}, m[3] = {1.0, 0.8, 0.5}, g = 9.81;
  double tau[3] = {0, 0, 0};
  for (int j = 0; j < 3; ++j) {
    // torque at joint j = sum over links k >= j of m_k g (x of C_k - x of O_j)
    double x_joint = 0.0, angle = 0.0;
    for (int k = 0; k < j; ++k) {
      angle += q[k];
      x_joint += l[k] * std::cos(angle);
    }
    double x = 0.0;
    angle = 0.0;
    for (int k = 0; k < 3; ++k) {
      angle += q[k];
      const double xc = x + 0.5 * l[k] * std::cos(angle);
      if (k >= j) tau[j] += m[k] * g * (xc - x_joint);
      x += l[k] * std::cos(angle);
    }
  }
  EXPECT_TRUE(close(vec(doc["states"][0]["tau"]), Eigen::Vector3d(tau[0], tau[1], tau[2])));
}

TEST(Cli, InfoAndTableOutput) {
  const json info = parseJson(denoc({"info", kStanford, "--format", "json"}));
  ASSERT_EQ(info.at("joints").size(), 6u);
  EXPECT_EQ(info["joints"][2]["type"], "prismatic");
  EXPECT_EQ(info["joints"][0]["mass"], 9.0);
  EXPECT_DOUBLE_EQ(info["total_mass"].get<double>(), 21.1);
  EXPECT_TRUE(info["joints"][0]["lower"].is_null());  // no limits in the paper's table

  const Outcome table = denoc({"id", kStanford, "--q=0,1.5707963267948966,0.05,0,0,0"});
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("N m"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("prismatic"), std::string::npos);
}

TEST(Cli, DemoRuns) {
  const Outcome r = denoc({"demo"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"stanford_arm", "Inverse dynamics", "Forward dynamics", "I(q)", "U:", "log det I"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
}

TEST(Cli, BadInputGivesExitCode2AndAMessage) {
  TempDir dir;
  const std::string bad_model = dir.write("bad.json", R"({"format": "denoc-dh/1", "gravity": [0, 0, -9.81],
    "links": [{"type": "revolute", "a": 0, "b": 0, "alpha": 0, "theta": 0, "mass": "x", "com": [0, 0, 0],
               "inertia": {"principal": [1, 1, 1]}}]})");
  const std::string header = "q0,q1,q2\n";
  const std::string short_row = dir.write("short.csv", header + "1,2\n");
  const std::string nan_row = dir.write("nan.csv", header + "1,nan,3\n");
  const std::string bad_col = dir.write("badcol.csv", "q0,q1,x2\n1,2,3\n");
  const std::string incomplete = dir.write("incomplete.csv", "q0,q1,q2,qd0\n1,2,3,4\n");
  const std::string empty = dir.write("empty.csv", "q0,q1,q2\n");
  const std::string bad_json = dir.write("bad_states.json", R"([{"q": [1, 2]}])");
  const std::string txt_model = dir.write("model.txt", "{}");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"id", dir.path("missing.json")}, "no such file"},
      {{"id", txt_model}, "unknown model file extension"},
      {{"id", bad_model}, "links[0] ('link1').mass: expected a number"},
      {{"id", kPlanar, "--q", "1,2"}, "--q: 2 entries, expected 3"},
      {{"id", kPlanar, "--q", "1,2,3,4"}, "--q: 4 entries, expected 3"},
      {{"id", kPlanar, "--q", "1,nan,3"}, "not a finite number"},
      {{"fd", kPlanar, "--tau", "1,inf,3"}, "not a finite number"},
      {{"id", kPlanar, "--qd", "1,x,3"}, "'x' is not a number"},
      {{"id", kPlanar, "--qdd", "1,,3"}, "empty entry"},
      {{"id", kPlanar, "--states", short_row}, "short.csv:2: 2 values, expected 3"},
      {{"id", kPlanar, "--states", nan_row}, "nan.csv:2, column 'q1'"},
      {{"id", kPlanar, "--states", bad_col}, "column 'x2' is not one of"},
      {{"id", kPlanar, "--states", incomplete}, "'qd1' is missing"},
      {{"id", kPlanar, "--states", empty}, "no states"},
      {{"id", kPlanar, "--states", bad_json}, "states[0].q: expected an array of 3 numbers"},
      {{"id", kPlanar, "--states", dir.path("none.csv")}, "no such file"},
      {{"id", kPlanar, "--states", short_row, "--q", "1,2,3"}, "cannot be combined"},
      {{"fd", kPlanar, "--route", "lu"}, "--route"},
      {{"id", kPlanar, "--format", "xml"}, "--format"},
      {{"id"}, "MODEL"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      // a mistyped option is named with the nearest ones the command knows, and where the help is
      {{"id", kPlanar, "--tip_link", "b"},
       "unknown option --tip_link for denoc id (did you mean '--tip-link'?); see denoc id --help"},
      {{"--sever", "127.0.0.1:1", "list"},
       "unknown option --sever for denoc list (did you mean '--server'?)"},
      {{"fd", kPlanar, "--qq=1"}, "unknown option --qq for denoc fd (did you mean '--q', '--qd'"},
      {{"info", kPlanar, "--frobnicate"},
       "unknown option --frobnicate for denoc info; see denoc info --help"},
      {{}, "subcommand"},
      {{"demo", "--model", bad_model}, "mass"},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const Outcome r = denoc(c.args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << "stderr: " << r.err << "\nexpected: " << c.message;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(Cli, UrdfModel) {
  const std::string ur5 = std::string(DENOC_MODELS_DIR) + "/ur5.urdf";
  const Model model = buildModelFromUrdfFile(ur5);
  Data data(model);
  const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(model.n, -1.0, 1.2);
  const Eigen::VectorXd qd = Eigen::VectorXd::LinSpaced(model.n, 0.5, -0.4);
  const json doc = parseJson(denoc({"id", ur5, "--q=" + list(q), "--qd=" + list(qd), "--format", "json"}));
  EXPECT_EQ(doc.at("dof"), model.n);
  EXPECT_TRUE(close(vec(doc["states"][0]["tau"]),
                    inverseDynamics(model, data, q, qd, Eigen::VectorXd::Zero(model.n))));
  const Outcome bad = denoc({"info", ur5, "--tip-link", "no_such_link"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("no_such_link"), std::string::npos) << bad.err;
}

// ------------------------------------------------------------------------------ trees and moving roots

const std::string kSolo = kModels + "trees/solo12.urdf";

Model treeModel(const std::string& path, RootJoint root) {
  UrdfOptions options;
  options.root = root;
  return buildModelFromUrdfFile(path, options);
}

struct TreeState {
  Eigen::VectorXd q, v, a, tau;
};

TreeState randomTreeState(const Model& model, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  TreeState s;
  s.q = randomConfiguration(model, rng);
  s.v = Eigen::VectorXd::NullaryExpr(model.nv, [&] { return u(rng); });
  s.a = Eigen::VectorXd::NullaryExpr(model.nv, [&] { return u(rng); });
  s.tau = Eigen::VectorXd::NullaryExpr(model.nv, [&] { return 3.0 * u(rng); });
  return s;
}

std::string wrenchArg(const std::string& link, const Vector6d& w, bool local) {
  return link + ":" + list(w) + (local ? ":local" : "");
}

TEST(Cli, TreeInfoListsTheJointsWithTheirParentsAndIndices) {
  for (const RootJoint root : {RootJoint::Floating, RootJoint::Planar, RootJoint::Fixed}) {
    const Model model = treeModel(kSolo, root);
    const char* name = root == RootJoint::Floating ? "floating"
                       : root == RootJoint::Planar ? "planar"
                                                   : "fixed";
    SCOPED_TRACE(name);
    const json info = parseJson(denoc({"info", kSolo, "--root", name, "--format", "json"}));
    EXPECT_EQ(info.at("nq"), model.nq);
    EXPECT_EQ(info.at("nv"), model.nv);
    EXPECT_EQ(info.at("nu"), model.nu);
    EXPECT_EQ(info.at("dof"), model.nv);
    EXPECT_EQ(info.at("root"), name);
    EXPECT_EQ(info.at("root_link"), "base_link");
    EXPECT_EQ(info.at("depth"), model.depth + (root == RootJoint::Fixed ? 0 : 1));
    EXPECT_EQ(info.contains("root_joint"), root != RootJoint::Fixed);
    ASSERT_EQ(info.at("joints").size(), static_cast<std::size_t>(model.n));
    for (int i = 0; i < model.n; ++i) {
      const json& j = info["joints"][static_cast<std::size_t>(i)];
      const JointSpec& spec = model.spec.joints[static_cast<std::size_t>(i)];
      EXPECT_EQ(j.at("name"), spec.name);
      EXPECT_EQ(j.at("link"), spec.link);
      EXPECT_EQ(j.at("q_index"), model.nqr + i);
      EXPECT_EQ(j.at("v_index"), model.nr + i);
      const int p = model.parent[static_cast<std::size_t>(i)];
      if (p >= 0) {
        EXPECT_EQ(j.at("parent"), model.spec.joints[static_cast<std::size_t>(p)].name);
        EXPECT_EQ(j.at("depth").get<int>(),
                  info["joints"][static_cast<std::size_t>(p)]["depth"].get<int>() + 1);
      } else if (root == RootJoint::Fixed) {
        EXPECT_TRUE(j.at("parent").is_null());
        EXPECT_EQ(j.at("depth"), 1);
      } else {
        EXPECT_EQ(j.at("parent"), "root_joint");
        EXPECT_EQ(j.at("depth"), 2);
      }
    }
  }
  // the table: the root line on top, the legs' joints indented under their hips
  const Outcome table = denoc({"info", kSolo, "--floating"});
  ASSERT_EQ(table.code, 0) << table.err;
  for (const char* s : {"nq 19, nv 18, nu 12", "root_joint", "floating", "0..6", "0..5", "\n1     FL_HAA",
                        "\n2       FL_HFE", "\n3         FL_KFE"}) {
    EXPECT_NE(table.out.find(s), std::string::npos) << s << "\n" << table.out;
  }
}

TEST(Cli, TreeInverseDynamicsWithWrenchesMatchesTheCore) {
  for (const RootJoint root : {RootJoint::Floating, RootJoint::Planar, RootJoint::Fixed}) {
    const Model model = treeModel(kSolo, root);
    Data data(model);
    const char* name = root == RootJoint::Floating ? "floating"
                       : root == RootJoint::Planar ? "planar"
                                                   : "fixed";
    SCOPED_TRACE(name);
    const TreeState s = randomTreeState(model, 7);
    Vector6d w1, w2;
    w1 << 0.3, -0.2, 0.1, 4.0, -5.0, 30.0;
    w2 << -1.0, 0.5, 0.25, 2.0, 1.0, -3.0;
    const std::vector<std::string> base = {
        "id",       kSolo, "--root", name, "--q=" + list(s.q), "--qd=" + list(s.v), "--qdd=" + list(s.a),
        "--format", "json"};
    std::vector<std::string> args = base;
    args.push_back("--wrench=" + wrenchArg("FL_LOWER_LEG", w1, false));
    args.push_back("--wrench=" + wrenchArg("HR_LOWER_LEG", w2, true));
    const json doc = parseJson(denoc(args));
    EXPECT_EQ(doc.at("nq"), model.nq);
    EXPECT_EQ(doc.at("nv"), model.nv);
    const json& st = doc.at("states").at(0);
    EXPECT_TRUE(close(vec(st.at("q")), s.q, 0.0));  // echoed exactly
    ExternalWrench e1, e2;
    e1.frame = frameIndex(model, "FL_LOWER_LEG");
    e1.wrench = w1;
    e1.reference = ReferenceFrame::Base;
    e2.frame = frameIndex(model, "HR_LOWER_LEG");
    e2.wrench = w2;
    e2.reference = ReferenceFrame::Local;
    const Eigen::VectorXd want =
        inverseDynamics(model, data, s.q, s.v, s.a, std::vector<ExternalWrench>{e1, e2});
    EXPECT_TRUE(close(vec(st.at("tau")), want, 1e-14));
    // independently: without the wrenches, tau is larger by J^T f (the frames' Jacobians at their origins)
    const Eigen::VectorXd plain = vec(parseJson(denoc(base)).at("states").at(0).at("tau"));
    const Eigen::MatrixXd J1 = computeFrameJacobian(model, data, s.q, e1.frame, Eigen::Vector3d::Zero());
    const Eigen::MatrixXd J2 =
        computeFrameJacobian(model, data, s.q, e2.frame, Eigen::Vector3d::Zero(), ReferenceFrame::Local);
    EXPECT_TRUE(close(vec(st.at("tau")), plain - J1.transpose() * w1 - J2.transpose() * w2, 1e-11));
  }
}

TEST(Cli, AWrenchOnAFixedFrameActsAtItsOrigin) {
  // FL_FOOT is merged into FL_LOWER_LEG by a fixed joint: its wrench is J^T w of the Jacobian of its origin
  const Model model = treeModel(kSolo, RootJoint::Floating);
  Data data(model);
  const TreeState s = randomTreeState(model, 21);
  const FixedFrameSpec* foot = nullptr;
  for (const FixedFrameSpec& f : model.spec.fixed_frames) {
    if (f.name == "FL_FOOT") foot = &f;
  }
  ASSERT_NE(foot, nullptr);
  Vector6d w;
  w << 0.03, -0.02, 0.01, 1.0, -2.0, 9.0;
  const std::vector<std::string> base = {
      "id",       kSolo, "--floating", "--q=" + list(s.q), "--qd=" + list(s.v), "--qdd=" + list(s.a),
      "--format", "json"};
  const Eigen::VectorXd plain = vec(parseJson(denoc(base)).at("states").at(0).at("tau"));
  for (const bool local : {false, true}) {
    SCOPED_TRACE(local ? "local" : "world");
    std::vector<std::string> args = base;
    args.push_back("--wrench=" + wrenchArg("FL_FOOT", w, local));
    const Eigen::VectorXd tau = vec(parseJson(denoc(args)).at("states").at(0).at("tau"));
    // world axes: the Jacobian of the foot's origin in world axes; the foot's axes: the link's Jacobian (its
    // axes) with the wrench turned from the foot's axes into the link's
    Eigen::Matrix<double, 6, 1> turned = w;
    turned.head<3>() = foot->rotation * w.head<3>();
    turned.tail<3>() = foot->rotation * w.tail<3>();
    const Eigen::MatrixXd J = computeFrameJacobian(model, data, s.q, foot->joint, foot->origin,
                                                   local ? ReferenceFrame::Local : ReferenceFrame::Base);
    EXPECT_TRUE(close(tau, plain - J.transpose() * (local ? turned : w), 1e-11));
  }
}

TEST(Cli, TreeForwardDynamicsWithWrenchesInvertsInverseDynamics) {
  const Model model = treeModel(kSolo, RootJoint::Floating);
  Data data(model);
  const TreeState s = randomTreeState(model, 8);
  Vector6d w;
  w << 0.1, 0.2, -0.3, 1.0, 2.0, 20.0;
  std::vector<ExternalWrench> wrenches(1);
  wrenches[0].frame = frameIndex(model, "FR_LOWER_LEG");
  wrenches[0].wrench = w;
  wrenches[0].reference = ReferenceFrame::Base;
  for (const char* route : {"saha", "cholesky"}) {
    SCOPED_TRACE(route);
    const json doc = parseJson(denoc(
        {"fd", kSolo, "--floating", "--route", route, "--q=" + list(s.q), "--qd=" + list(s.v),
         "--tau=" + list(s.tau), "--wrench=" + wrenchArg("FR_LOWER_LEG", w, false), "--format", "json"}));
    const Eigen::VectorXd qdd = vec(doc.at("states").at(0).at("qdd"));
    ASSERT_EQ(qdd.size(), model.nv);
    EXPECT_TRUE(close(qdd, forwardDynamics(model, data, s.q, s.v, s.tau, wrenches), 1e-10));
    // inverse dynamics of the answer with the same wrench gives the torques back
    EXPECT_TRUE(close(inverseDynamics(model, data, s.q, s.v, qdd, wrenches), s.tau, 1e-10));
  }
}

TEST(Cli, TreeFactorMatchesTheCore) {
  const Model model = treeModel(kSolo, RootJoint::Planar);
  Data data(model);
  const TreeState s = randomTreeState(model, 9);
  const json doc = parseJson(
      denoc({"factor", kSolo, "--root", "planar", "--q=" + list(s.q), "--inverse", "--format", "json"}));
  const json& st = doc.at("states").at(0);
  // the inertia matrix from inverse dynamics column by column (gravity and velocities off through
  // differences)
  Eigen::MatrixXd M(model.nv, model.nv);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  const Eigen::VectorXd g = inverseDynamics(model, data, s.q, zero, zero);
  for (int j = 0; j < model.nv; ++j) {
    M.col(j) = inverseDynamics(model, data, s.q, zero, Eigen::VectorXd::Unit(model.nv, j)) - g;
  }
  EXPECT_TRUE(close(mat(st.at("I")), M, 1e-12));
  const Eigen::MatrixXd U = mat(st.at("U"));
  const Eigen::VectorXd D = vec(st.at("D"));
  EXPECT_TRUE(close(U * D.asDiagonal() * U.transpose(), M, 1e-12));
  EXPECT_TRUE(close(mat(st.at("I_inv")) * M, Eigen::MatrixXd::Identity(model.nv, model.nv), 1e-10));
}

TEST(Cli, TreeStatesFilesHaveNqAndNvColumns) {
  TempDir dir;
  const Model model = treeModel(kSolo, RootJoint::Floating);
  Data data(model);
  const TreeState a = randomTreeState(model, 10), b = randomTreeState(model, 11);
  std::string csv;
  for (int i = 0; i < model.nq; ++i) csv += "q" + std::to_string(i) + ",";
  for (int i = 0; i < model.nv; ++i) csv += "qd" + std::to_string(i) + (i + 1 < model.nv ? "," : "\n");
  for (const TreeState* s : {&a, &b}) csv += list(s->q) + "," + list(s->v) + "\n";
  const std::string csv_path = dir.write("states.csv", csv);
  json states = json::array();
  for (const TreeState* s : {&a, &b}) {
    states.push_back({{"q", std::vector<double>(s->q.data(), s->q.data() + s->q.size())},
                      {"qd", std::vector<double>(s->v.data(), s->v.data() + s->v.size())}});
  }
  const std::string json_path = dir.write("states.json", states.dump());
  for (const std::string& path : {csv_path, json_path}) {
    SCOPED_TRACE(path);
    const json doc = parseJson(denoc({"id", kSolo, "--floating", "--states", path, "--format", "json"}));
    ASSERT_EQ(doc.at("states").size(), 2u);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
    EXPECT_TRUE(close(vec(doc["states"][0].at("tau")), inverseDynamics(model, data, a.q, a.v, zero), 1e-14));
    EXPECT_TRUE(close(vec(doc["states"][1].at("tau")), inverseDynamics(model, data, b.q, b.v, zero), 1e-14));
  }
  // without q the root stands upright at the origin: the identity quaternion, not a zero one
  const std::string qd_only = dir.write("qd.json", R"([{"qd": [)" + list(a.v) + "]}]");
  const json doc = parseJson(denoc({"id", kSolo, "--floating", "--states", qd_only, "--format", "json"}));
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(model.nq);
  q0[6] = 1.0;
  EXPECT_TRUE(close(vec(doc["states"][0].at("q")), q0, 0.0));
  // the CSV as the output writes it reads back
  const Outcome out = denoc({"id", kSolo, "--floating", "--states", csv_path, "--format", "csv"});
  ASSERT_EQ(out.code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("q0,", 0), 0u);
  EXPECT_NE(out.out.find(",q18,qd0,"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find(",tau17\n"), std::string::npos) << out.out;
}

TEST(Cli, TreeBadInputNamesTheFieldAtFault) {
  TempDir dir;
  const Model model = treeModel(kSolo, RootJoint::Floating);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(model.nq);  // a quaternion of norm 0
  Eigen::VectorXd big = Eigen::VectorXd::Zero(model.nq);
  big[6] = 1e300;
  const std::string short_csv = dir.write("short.csv", "q0,q1,q2\n1,2,3\n");
  const std::string wide_json = dir.write("wide.json", R"([{"qd": [1, 2, 3]}])");
  const std::string q20 = dir.write("q20.csv", "q19\n1\n");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"id", kSolo, "--floating", "--q=" + list(q)}, "quaternion"},
      {{"id", kSolo, "--floating", "--q=" + list(big)}, "q[6] is 1e+300"},
      {{"id", kSolo, "--floating", "--q", "1,2"}, "--q: 2 entries, expected 19 (nq: 7 for the floating root"},
      {{"id", kSolo, "--floating", "--qd", "1,2"},
       "--qd: 2 entries, expected 18 (nv: 6 for the floating root"},
      {{"id", kSolo, "--root", "planar", "--qdd", "1"},
       "--qdd: 1 entries, expected 15 (3 for the planar root"},
      {{"fd", kSolo, "--floating", "--tau", "1"}, "--tau: 1 entries, expected 18"},
      {{"id", kSolo, "--floating", "--states", short_csv}, "columns q0..q18 are incomplete"},
      {{"id", kSolo, "--floating", "--states", wide_json}, "states[0].qd: expected an array of 18 numbers"},
      {{"id", kSolo, "--floating", "--states", q20}, "the model has 19 configuration coordinates"},
      {{"id", kSolo, "--floating", "--wrench", "NO_SUCH_LINK:1,2,3,4,5,6"},
       "--wrench: 'NO_SUCH_LINK' is not a frame of model 'solo'"},
      {{"id", kSolo, "--floating", "--wrench", "FL_LOWER_LEG:1,2,3"}, "has 3 numbers, expected 6"},
      {{"id", kSolo, "--floating", "--wrench", "1,2,3,4,5,6"}, "names no link"},
      {{"id", kSolo, "--floating", "--wrench", "FL_LOWER_LEG:1,2,3,nan,5,6"}, "not a finite number"},
      {{"id", kSolo, "--root", "rolling"}, "--root"},
      {{"id", kSolo, "--floating", "--root", "planar"}, "--floating contradicts --root planar"},
      {{"id", kStanford, "--floating"}, "a moving root is for URDF files only"},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const Outcome r = denoc(c.args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << "stderr: " << r.err << "\nexpected: " << c.message;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(Cli, SerialChainsTakeWrenchesToo) {
  Fixture f(12);
  Vector6d w;
  w << 0.5, -0.5, 0.2, 10.0, -3.0, 7.0;
  const json doc =
      parseJson(denoc({"id", kStanford, "--q=" + list(f.q), "--qd=" + list(f.qd), "--qdd=" + list(f.qdd),
                       "--wrench=tip:" + list(w) + ":local", "--format", "json"}));
  EXPECT_EQ(doc.at("root"), "fixed");
  EXPECT_EQ(doc.at("nq"), 6);
  // on the tip, in its axes: the tip-wrench form of inverse dynamics
  EXPECT_TRUE(close(vec(doc["states"][0].at("tau")), inverseDynamics(f.model, f.data, f.q, f.qd, f.qdd, w)));
}

// ------------------------------------------------------------------------------ simulate and torques

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  int column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no column " << name;
    return 0;
  }
};

Csv parseCsv(const std::string& text) {
  Csv csv;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  std::stringstream h(line);
  for (std::string cell; std::getline(h, cell, ',');) csv.header.push_back(cell);
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) row.push_back(std::stod(cell));
    EXPECT_EQ(row.size(), csv.header.size()) << line;
    csv.rows.push_back(row);
  }
  return csv;
}

TEST(Cli, SimulateATreeUnderAFloatingRootGivesTheCoresRk4Samples) {
  const Model model = treeModel(kSolo, RootJoint::Floating);
  const TreeState s = randomTreeState(model, 22);
  const Eigen::VectorXd qd0 = 0.2 * s.v;
  const Outcome r = denoc({"simulate", kSolo, "--floating", "--integrator", "rk4", "--step", "0.002",
                           "--t-end", "0.05", "--dt-out", "0.01", "--q0=" + list(s.q), "--qd0=" + list(qd0)});
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv csv = parseCsv(r.out);
  ASSERT_EQ(csv.header.size(), static_cast<std::size_t>(1 + model.nq + model.nv + 1));
  EXPECT_EQ(csv.header[static_cast<std::size_t>(model.nq)], "q18");
  EXPECT_EQ(csv.header[static_cast<std::size_t>(model.nq + 1)], "qd0");
  SimulationOptions o;
  o.integrator = Integrator::RK4;
  o.step = 0.002;
  o.t_end = 0.05;
  o.dt_out = 0.01;
  const SimulationResult want = simulate(model, s.q, qd0, o);
  ASSERT_EQ(csv.rows.size(), static_cast<std::size_t>(want.t.size()));
  for (std::size_t k = 0; k < csv.rows.size(); ++k) {
    const auto ki = static_cast<Eigen::Index>(k);
    for (int j = 0; j < model.nq; ++j)
      EXPECT_EQ(csv.rows[k][static_cast<std::size_t>(1 + j)], want.q(ki, j)) << k;
    for (int j = 0; j < model.nv; ++j) {
      EXPECT_EQ(csv.rows[k][static_cast<std::size_t>(1 + model.nq + j)], want.qd(ki, j)) << k;
    }
    // the quaternion stays a unit one
    EXPECT_NEAR(Eigen::Vector4d(csv.rows[k][4], csv.rows[k][5], csv.rows[k][6], csv.rows[k][7]).norm(), 1.0,
                1e-12);
  }
}

TEST(Cli, SimulateCsvMatchesTheCoreAndConservesEnergy) {
  const Outcome r = denoc({"simulate", kPlanar, "--t-end", "5", "--dt-out", "0.25", "--q0=0.3,-0.2,0.1",
                           "--qd0=0,0.5,0", "--rtol", "1e-11", "--atol", "1e-13"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // no progress line when stderr is not a terminal
  const Csv csv = parseCsv(r.out);
  ASSERT_EQ(csv.header, (std::vector<std::string>{"t", "q0", "q1", "q2", "qd0", "qd1", "qd2", "energy"}));
  ASSERT_EQ(csv.rows.size(), 21u);
  const Model model = buildModelFromDH(planarArmDH());
  SimulationOptions o;
  o.t_end = 5;
  o.dt_out = 0.25;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  const SimulationResult want =
      simulate(model, Eigen::Vector3d(0.3, -0.2, 0.1), Eigen::Vector3d(0, 0.5, 0), o);
  const double e0 = csv.rows[0][7];
  for (std::size_t k = 0; k < csv.rows.size(); ++k) {
    const auto& row = csv.rows[k];
    EXPECT_EQ(row[0], want.t[static_cast<Eigen::Index>(k)]);
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(row[1 + j], want.q(static_cast<Eigen::Index>(k), j)) << k;  // 17 digits read back exactly
      EXPECT_EQ(row[4 + j], want.qd(static_cast<Eigen::Index>(k), j)) << k;
    }
    EXPECT_LT(std::abs(row[7] - e0), 1e-8 * std::abs(e0)) << "energy drift at t = " << row[0];
  }
  // RK4 with a constant torque and damping: runs, and gives the core's numbers
  const Outcome rk = denoc({"simulate", kPlanar, "--integrator", "rk4", "--step", "0.002", "--t-end", "0.5",
                            "--tau=0.1,0,-0.1", "--damping=0.05,0.05,0.05"});
  ASSERT_EQ(rk.code, 0) << rk.err;
  o = SimulationOptions();
  o.integrator = Integrator::RK4;
  o.step = 0.002;
  o.t_end = 0.5;
  o.torque = TorqueInput::constant(Eigen::Vector3d(0.1, 0, -0.1));
  o.damping = Eigen::Vector3d::Constant(0.05);
  const SimulationResult want4 = simulate(model, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), o);
  const Csv c4 = parseCsv(rk.out);
  ASSERT_EQ(c4.rows.size(), 51u);
  EXPECT_EQ(c4.rows.back()[1], want4.q(50, 0));
  EXPECT_EQ(c4.rows.back()[6], want4.qd(50, 2));
}

TEST(Cli, TorquesAlongEq39EqualTheCoresTorqueHistory) {
  const Outcome r = denoc({"torques", kStanford, "--trajectory", "eq39", "--dt", "0.25"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Csv csv = parseCsv(r.out);
  const Model model = buildModelFromDH(stanfordArmDH());
  const TorqueHistory want = computeTorqueHistory(model, stanfordEq39Trajectory(), uniformTimes(10.0, 0.25));
  ASSERT_EQ(csv.rows.size(), static_cast<std::size_t>(want.t.size()));
  ASSERT_EQ(csv.header.size(), 1u + 4 * 6);
  for (std::size_t k = 0; k < csv.rows.size(); ++k) {
    const auto ki = static_cast<Eigen::Index>(k);
    EXPECT_EQ(csv.rows[k][0], want.t[ki]);
    for (int j = 0; j < 6; ++j) {
      EXPECT_EQ(csv.rows[k][static_cast<std::size_t>(csv.column(std::string("q").append(std::to_string(j))))],
                want.q(ki, j));
      EXPECT_EQ(
          csv.rows[k][static_cast<std::size_t>(csv.column(std::string("tau").append(std::to_string(j))))],
          want.tau(ki, j))
          << "t = " << want.t[ki] << ", joint " << j;
    }
  }
  // a trajectory file: the same trajectory spelled out gives the same torques
  TempDir dir;
  const CycloidalTrajectory t = stanfordEq39Trajectory();
  json spec = {{"duration", t.duration()},
               {"start", std::vector<double>(t.start().data(), t.start().data() + 6)},
               {"end", std::vector<double>(t.end().data(), t.end().data() + 6)}};
  const std::string file = dir.write("eq39.json", spec.dump());
  const Outcome f = denoc({"torques", kStanford, "--trajectory", file, "--dt", "0.25"});
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_EQ(f.out, r.out);
  // bad input
  const Outcome missing = denoc({"torques", kStanford, "--trajectory", dir.path("none.json")});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("no such file"), std::string::npos) << missing.err;
  const Outcome short_spec = denoc({"torques", kPlanar, "--trajectory", file});
  EXPECT_EQ(short_spec.code, 2);
  EXPECT_NE(short_spec.err.find("start"), std::string::npos) << short_spec.err;
  const Outcome bad_end = denoc({"simulate", kPlanar, "--t-end", "-1"});
  EXPECT_EQ(bad_end.code, 2);
  EXPECT_NE(bad_end.err.find("t_end"), std::string::npos) << bad_end.err;
  const Outcome needs_server = denoc({"list"});
  EXPECT_EQ(needs_server.code, 2);
  EXPECT_NE(needs_server.err.find("--server"), std::string::npos) << needs_server.err;
}

}  // namespace
}  // namespace denoc
