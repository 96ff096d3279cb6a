// Trees and moving roots through a real denocd, against the core computed in this process (the oracle: the
// core's single-state functions, themselves checked against MuJoCo and KDL in
// tests/core/test_tree_dynamics.cpp and tests/core/test_urdf_trees.cpp): Solo-12 under a floating root
// registered from its URDF; its ModelInfo (the tree, nq, nv, nu, the frames with the feet merged by fixed
// joints); inverse and forward dynamics with external wrenches on the feet; the full factor; several frames
// with the centre of mass and the centroidal map; derivatives and rollouts in the tangent space; the stream
// with wrenches; a payload on a named link; simulation on the manifold (RK4 and DOPRI5, the core's samples);
// derivatives and rollouts with external wrenches (feet as fixed frames, links, the root link; per state or
// per rollout and shared). Then hostile shapes: quaternions of norm 0 and 1e300, nq/nv mismatches, unknown
// frames, wrenches on missing links, bodies and depth over the limits, each refused by name while the
// server stays healthy. A serial arm's answer is bit for bit the core's.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "denoc/algorithm/centroidal.hpp"
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/configuration.hpp"
#include "denoc/forward_route.hpp"
#include "denoc/payload.hpp"
#include "denoc/rollout.hpp"
#include "denoc/simulate.hpp"
#include "denoc/urdf.hpp"
#include "server_process.hpp"
#include "test_support.hpp"

namespace denoc {
namespace {

using test::ServerProcess;
using test::TempDir;
using Doubles = google::protobuf::RepeatedField<double>;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

const std::string kSolo = std::string(DENOC_MODELS_DIR) + "/trees/solo12.urdf";
const std::string kHumanoid = std::string(DENOC_MODELS_DIR) + "/trees/simple_humanoid.urdf";
const char* const kFeet[4] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};

Model soloModel(RootJoint root = RootJoint::Floating) {
  UrdfOptions o;
  o.root = root;
  return buildModelFromUrdfFile(kSolo, o);
}

v1::RegisterModelRequest registration(const std::string& path, v1::RootJoint root) {
  v1::RegisterModelRequest req;
  req.mutable_urdf()->set_text(test::readText(path));
  req.mutable_urdf()->set_root(root);
  return req;
}

// count random states of the model: q on the manifold (unit quaternion), v, a in [-1, 1]
struct States {
  std::vector<double> q, v, a;
};
States randomStates(const Model& m, int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  States s;
  for (int k = 0; k < count; ++k) {
    const Eigen::VectorXd q = randomConfiguration(m, rng);
    s.q.insert(s.q.end(), q.data(), q.data() + q.size());
    for (int i = 0; i < m.nv; ++i) s.v.push_back(u(rng));
    for (int i = 0; i < m.nv; ++i) s.a.push_back(u(rng));
  }
  return s;
}

/// A rollout request for the floating Solo-12 (nq 19, nv 18) of `count` rollouts of T steps, each starting
/// at a state of s (x0 = [q; v]); the controls are left to the caller.
v1::RolloutRequest soloRollout(const std::string& id, const States& s, int count, int T, double dt,
                               bool linearize = true) {
  v1::RolloutRequest req;
  req.set_model_id(id);
  req.set_count(static_cast<std::uint32_t>(count));
  req.set_dof(18);
  req.set_steps(static_cast<std::uint32_t>(T));
  req.set_dt(dt);
  req.set_linearize(linearize);
  for (std::size_t k = 0; k < static_cast<std::size_t>(count); ++k) {
    req.mutable_x0()->Add(s.q.begin() + static_cast<long>(k * 19),
                          s.q.begin() + static_cast<long>(k * 19 + 19));
    req.mutable_x0()->Add(s.v.begin() + static_cast<long>(k * 18),
                          s.v.begin() + static_cast<long>(k * 18 + 18));
  }
  return req;
}

/// Rollout k of a Solo-12 Rollout answer (T steps of dt from x0k with the controls uk, 12 per step, and the
/// wrenches) against the core's rollout of the same, element by element: its 37-entry states, A (36 x 36) and
/// B (36 x 12) per step.
void expectRolloutIsTheCores(const Model& m, const v1::RolloutResponse& resp, int k, int T, double dt,
                             const double* x0k, const double* uk,
                             const std::vector<ExternalWrench>& wrenches = {}) {
  RolloutWorkspace ws(m);
  RolloutOptions o;
  o.step = dt;
  o.steps = T;
  std::vector<double> states(static_cast<std::size_t>((T + 1) * 37)),
      A(36u * 36u * static_cast<std::size_t>(T)), B(36u * 12u * static_cast<std::size_t>(T));
  rollout(m, ws, o, x0k, uk, states.data(), A.data(), B.data(), nullptr,
          wrenches.empty() ? nullptr : wrenches.data(), static_cast<int>(wrenches.size()));
  const auto at = static_cast<std::size_t>(k);
  const std::string what = "rollout " + std::to_string(k);
  test::expectClose(resp.states().data() + at * states.size(), states.data(), states.size(),
                    what + " states");
  test::expectClose(resp.a().data() + at * A.size(), A.data(), A.size(), what + " A");
  test::expectClose(resp.b().data() + at * B.size(), B.data(), B.size(), what + " B");
}

void expectNear(const Doubles& got, const double* want, std::size_t n, const std::string& what,
                double tol = 1e-11) {
  ASSERT_EQ(static_cast<std::size_t>(got.size()), n) << what;
  test::expectClose(got.data(), want, n, what, tol);
}

class ServerTrees : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store"),
                                              std::vector<std::string>{"--max-states", "400"});
    stub_ = server_->stub();
    v1::RegisterModelResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status s = stub_->RegisterModel(&ctx, registration(kSolo, v1::ROOT_JOINT_FLOATING), &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    id_ = resp.model_id();
    info_ = resp.model();
  }

  grpc::Status call(const v1::InverseDynamicsRequest& req, v1::InverseDynamicsResponse& resp) {
    grpc::ClientContext ctx;
    return stub_->InverseDynamics(&ctx, req, &resp);
  }

  v1::InverseDynamicsRequest idRequest(const States& s, int count) const {
    v1::InverseDynamicsRequest req;
    req.set_model_id(id_);
    req.set_count(static_cast<std::uint32_t>(count));
    req.set_dof(static_cast<std::uint32_t>(model_.nv));
    req.mutable_q()->Add(s.q.begin(), s.q.end());
    req.mutable_qd()->Add(s.v.begin(), s.v.end());
    req.mutable_qdd()->Add(s.a.begin(), s.a.end());
    return req;
  }

  // a healthy server answers a plain call afterwards
  void expectHealthy() {
    const States s = randomStates(model_, 1, 99);
    v1::InverseDynamicsResponse resp;
    EXPECT_TRUE(call(idRequest(s, 1), resp).ok());
  }

  void expectRefused(const grpc::Status& s, grpc::StatusCode code, const std::string& names) {
    EXPECT_EQ(s.error_code(), code) << s.error_message();
    EXPECT_NE(s.error_message().find(names), std::string::npos)
        << "'" << s.error_message() << "' does not name " << names;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::Dynamics::Stub> stub_;
  std::string id_;
  v1::ModelInfo info_;
  Model model_ = soloModel();
};

TEST_F(ServerTrees, ModelInfoDescribesTheTree) {
  const Model& m = model_;
  EXPECT_EQ(info_.root(), v1::ROOT_JOINT_FLOATING);
  EXPECT_EQ(info_.nq(), 19u);
  EXPECT_EQ(info_.nv(), 18u);
  EXPECT_EQ(info_.nu(), 12u);
  EXPECT_EQ(info_.dof(), 18u);
  EXPECT_EQ(info_.depth(), static_cast<std::uint32_t>(m.depth));
  ASSERT_EQ(info_.joints_size(), m.n + 1);
  EXPECT_EQ(info_.joints(0).name(), "root_joint");
  EXPECT_EQ(info_.joints(0).type(), v1::JOINT_TYPE_FLOATING);
  EXPECT_EQ(info_.joints(0).nq(), 7u);
  EXPECT_EQ(info_.joints(0).nv(), 6u);
  EXPECT_EQ(info_.joints(0).link(), "base_link");
  for (int i = 0; i < m.n; ++i) {
    const v1::Joint& j = info_.joints(i + 1);
    const auto ui = static_cast<std::size_t>(i);
    EXPECT_EQ(j.name(), m.spec.joints[ui].name);
    EXPECT_EQ(j.link(), m.spec.joints[ui].link);
    // the legs hang from the base (the root joint, 0), each leg's joints from the one before
    EXPECT_EQ(j.parent(), m.parent[ui] >= 0 ? m.parent[ui] + 1 : 0) << j.name();
    EXPECT_EQ(j.q_index(), static_cast<std::uint32_t>(7 + i));
    EXPECT_EQ(j.v_index(), static_cast<std::uint32_t>(6 + i));
    EXPECT_EQ(j.depth(), info_.joints(j.parent()).depth() + 1);
  }
  // 12 links, the tip, the root link, then the fixed frames with the four feet
  ASSERT_GE(info_.frames_size(), m.n + 2 + 4);
  EXPECT_EQ(info_.frames(m.n).name(), "tip");
  EXPECT_EQ(info_.frames(m.n + 1).name(), "base_link");
  int feet = 0;
  for (const v1::Frame& f : info_.frames()) {
    for (const char* foot : kFeet) {
      if (f.name() != foot) continue;
      ++feet;
      EXPECT_EQ(f.fixed_to(), std::string(foot).substr(0, 2) + "_LOWER_LEG");
      EXPECT_EQ(info_.joints(f.joint()).link(), f.fixed_to());
    }
  }
  EXPECT_EQ(feet, 4);

  // the same file under a fixed and a planar root: other models, other shapes
  for (const auto& [root, nq, nv] :
       {std::tuple{v1::ROOT_JOINT_FIXED, 12u, 12u}, std::tuple{v1::ROOT_JOINT_PLANAR, 15u, 15u}}) {
    v1::RegisterModelResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->RegisterModel(&ctx, registration(kSolo, root), &resp).ok());
    EXPECT_NE(resp.model_id(), id_);
    EXPECT_EQ(resp.model().nq(), nq);
    EXPECT_EQ(resp.model().nv(), nv);
    EXPECT_EQ(resp.model().nu(), 12u);
    EXPECT_EQ(resp.model().root(), root);
  }
}

TEST_F(ServerTrees, InverseAndForwardDynamicsWithFootWrenchesEqualTheCore) {
  const Model& m = model_;
  const int count = 5;
  const States s = randomStates(m, count, 7);
  // per state on two feet (world axes), one shared by every state on a third (its own axes), none on the
  // fourth
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-20.0, 20.0);
  std::vector<double> w0(6 * count), w1(6 * count), w2(6);
  for (double& x : w0) x = u(rng);
  for (double& x : w1) x = u(rng);
  for (double& x : w2) x = u(rng);
  v1::InverseDynamicsRequest req = idRequest(s, count);
  const auto add = [](auto& r, const char* link, const std::vector<double>& values, v1::ReferenceFrame ref) {
    v1::LinkWrench* w = r.add_wrenches();
    w->set_link(link);
    w->set_reference(ref);
    w->mutable_wrench()->Add(values.begin(), values.end());
  };
  add(req, kFeet[0], w0, v1::REFERENCE_FRAME_BASE);
  add(req, kFeet[1], w1, v1::REFERENCE_FRAME_BASE);
  add(req, kFeet[2], w2, v1::REFERENCE_FRAME_LOCAL);
  v1::InverseDynamicsResponse resp;
  const grpc::Status st = call(req, resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.dof(), 18u);

  // the oracle: each foot as the point on its lower leg, through the core's ExternalWrench
  const auto foot = [&](const char* name) {
    for (const FixedFrameSpec& f : m.spec.fixed_frames) {
      if (f.name == name) return f;
    }
    throw std::runtime_error(std::string("no fixed frame ") + name);
  };
  Data d(m);
  std::vector<double> tau, qdd_want;
  for (int k = 0; k < count; ++k) {
    std::vector<ExternalWrench> ws(3);
    const double* values[3] = {w0.data() + 6 * k, w1.data() + 6 * k, w2.data()};
    for (int j = 0; j < 3; ++j) {
      const FixedFrameSpec f = foot(kFeet[j]);
      ws[static_cast<std::size_t>(j)].frame = f.joint;
      ws[static_cast<std::size_t>(j)].point = f.origin;
      Eigen::Matrix<double, 6, 1> w = Eigen::Map<const Eigen::Matrix<double, 6, 1>>(values[j]);
      if (j == 2) {  // given in the foot's axes: into the lower leg's
        w.head<3>() = (f.rotation * w.head<3>()).eval();
        w.tail<3>() = (f.rotation * w.tail<3>()).eval();
      }
      ws[static_cast<std::size_t>(j)].wrench = w;
      ws[static_cast<std::size_t>(j)].reference = j == 2 ? ReferenceFrame::Local : ReferenceFrame::Base;
    }
    const auto o = static_cast<std::size_t>(k);
    const Eigen::Map<const Eigen::VectorXd> q(s.q.data() + o * 19, 19), v(s.v.data() + o * 18, 18),
        a(s.a.data() + o * 18, 18);
    const Eigen::VectorXd t = inverseDynamics(m, d, q, v, a, ws);
    tau.insert(tau.end(), t.data(), t.data() + 18);
    // forward dynamics of those torques with the same wrenches gives a back
    const Eigen::VectorXd qdd = forwardDynamics(m, d, q, v, t, ws);
    EXPECT_LE((qdd - a).norm(), 1e-9 * (1.0 + a.norm()));
    qdd_want.insert(qdd_want.end(), qdd.data(), qdd.data() + 18);
  }
  expectNear(resp.tau(), tau.data(), tau.size(), "tau");

  v1::ForwardDynamicsRequest fd;
  fd.set_model_id(id_);
  fd.set_count(count);
  fd.set_dof(18);
  fd.mutable_q()->Add(s.q.begin(), s.q.end());
  fd.mutable_qd()->Add(s.v.begin(), s.v.end());
  fd.mutable_tau()->Add(tau.begin(), tau.end());
  add(fd, kFeet[0], w0, v1::REFERENCE_FRAME_BASE);
  add(fd, kFeet[1], w1, v1::REFERENCE_FRAME_BASE);
  add(fd, kFeet[2], w2, v1::REFERENCE_FRAME_LOCAL);
  v1::ForwardDynamicsResponse fresp;
  {
    grpc::ClientContext ctx;
    const grpc::Status fs = stub_->ForwardDynamics(&ctx, fd, &fresp);
    ASSERT_TRUE(fs.ok()) << fs.error_message();
  }
  expectNear(fresp.qdd(), qdd_want.data(), qdd_want.size(), "qdd", 1e-9);

  // without wrenches, both routes of a tree against the core's
  fd.clear_wrenches();
  for (v1::ForwardRoute route : {v1::FORWARD_ROUTE_SAHA, v1::FORWARD_ROUTE_CHOLESKY}) {
    fd.set_route(route);
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->ForwardDynamics(&ctx, fd, &fresp).ok());
    std::vector<double> want;
    for (int k = 0; k < count; ++k) {
      const auto o = static_cast<std::size_t>(k);
      const Eigen::VectorXd qdd =
          forwardDynamics(m, d, route == v1::FORWARD_ROUTE_SAHA ? ForwardRoute::Saha : ForwardRoute::Cholesky,
                          Eigen::Map<const Eigen::VectorXd>(s.q.data() + o * 19, 19),
                          Eigen::Map<const Eigen::VectorXd>(s.v.data() + o * 18, 18),
                          Eigen::Map<const Eigen::VectorXd>(tau.data() + o * 18, 18));
      want.insert(want.end(), qdd.data(), qdd.data() + 18);
    }
    expectNear(fresp.qdd(), want.data(), want.size(), "qdd without wrenches");
  }
  // Fixman's route is the serial chains'; wrenches need the articulated-body route
  fd.set_route(v1::FORWARD_ROUTE_FIXMAN);
  {
    grpc::ClientContext ctx;
    expectRefused(stub_->ForwardDynamics(&ctx, fd, &fresp), grpc::StatusCode::INVALID_ARGUMENT, "FIXMAN");
  }
  fd.set_route(v1::FORWARD_ROUTE_CHOLESKY);
  add(fd, kFeet[0], w0, v1::REFERENCE_FRAME_BASE);
  {
    grpc::ClientContext ctx;
    expectRefused(stub_->ForwardDynamics(&ctx, fd, &fresp), grpc::StatusCode::INVALID_ARGUMENT, "wrenches");
  }
}

TEST_F(ServerTrees, FullFactorEqualsTheCore) {
  const Model& m = model_;
  const int count = 3;
  const States s = randomStates(m, count, 11);
  v1::FullFactorRequest req;
  req.set_model_id(id_);
  req.set_count(count);
  req.set_dof(18);
  req.mutable_q()->Add(s.q.begin(), s.q.end());
  req.mutable_qd()->Add(s.v.begin(), s.v.end());
  req.set_bias(true);
  req.set_gravity_torque(true);
  req.set_inverse(true);
  req.set_convective(true);
  v1::FullFactorResponse resp;
  {
    grpc::ClientContext ctx;
    const grpc::Status st = stub_->FullFactor(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  ASSERT_EQ(resp.convective_size(), count * 324);
  Data d(m);
  for (int k = 0; k < count; ++k) {
    const auto o = static_cast<std::size_t>(k);
    const Eigen::Map<const Eigen::VectorXd> q(s.q.data() + o * 19, 19), v(s.v.data() + o * 18, 18);
    const Eigen::MatrixXd M = computeInertiaMatrix(m, d, q);
    const Eigen::Map<const RowMajor> I(resp.inertia().data() + o * 324, 18, 18),
        U(resp.u().data() + o * 324, 18, 18), Minv(resp.inverse().data() + o * 324, 18, 18);
    const Eigen::Map<const Eigen::VectorXd> D(resp.d().data() + o * 18, 18);
    EXPECT_LE((I - M).norm(), 1e-12 * M.norm()) << "state " << k;
    EXPECT_LE((U * D.asDiagonal() * U.transpose() - M).norm(), 1e-12 * M.norm())
        << "I = U D U^T, state " << k;
    EXPECT_LE((Minv * M - Eigen::MatrixXd::Identity(18, 18)).norm(), 1e-10) << "I^-1 I, state " << k;
    EXPECT_NEAR(resp.log_det(k), std::log(M.determinant()), 1e-10);
    // bias and gravity: inverse dynamics at zero acceleration (with and without velocity)
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(18);
    const Eigen::VectorXd bias = inverseDynamics(m, d, q, v, zero);
    const Eigen::VectorXd g = inverseDynamics(m, d, q, zero, zero);
    test::expectClose(resp.bias().data() + o * 18, bias.data(), 18, "bias", 1e-11);
    test::expectClose(resp.gravity_torque().data() + o * 18, g.data(), 18, "g", 1e-11);
    // the convective matrix: the core's bit for bit, and C v = bias - g
    const RowMajor C = computeConvectiveMatrix(m, d, q, v);
    const Eigen::Map<const RowMajor> Cs(resp.convective().data() + o * 324, 18, 18);
    EXPECT_EQ(RowMajor(Cs), C) << "state " << k;
    test::expectClose(Eigen::VectorXd(Cs * v).data(), Eigen::VectorXd(bias - g).data(), 18, "C v", 1e-11);
  }
}

// Several frames in one Kinematics call (links of the core and fixed frames, some turned against their
// link) with the centre of mass and the centroidal terms: the poses against the core's placement of the
// carrying link and the URDF's fixed placement, the Jacobians against central differences of those poses
// along integrateConfiguration, the centroidal terms against the core's.
void checkFrames(v1::Dynamics::Stub& stub, const std::string& id, const Model& m,
                 const std::vector<std::string>& links, unsigned seed) {
  const int count = 3;
  const auto nq = static_cast<std::size_t>(m.nq), nv = static_cast<std::size_t>(m.nv);
  const States s = randomStates(m, count, seed);
  const Eigen::Vector3d point(0.01, -0.02, 0.03);
  for (v1::ReferenceFrame reference : {v1::REFERENCE_FRAME_BASE, v1::REFERENCE_FRAME_LOCAL}) {
    v1::KinematicsRequest req;
    req.set_model_id(id);
    req.set_count(count);
    req.set_dof(static_cast<std::uint32_t>(nv));
    req.mutable_q()->Add(s.q.begin(), s.q.end());
    req.mutable_qd()->Add(s.v.begin(), s.v.end());
    for (const std::string& l : links) req.add_links(l);
    *req.mutable_point() = test::vec3(point);
    req.set_reference(reference);
    req.set_jacobian(true);
    req.set_jdot_qd(true);
    req.set_all_frames(true);
    req.set_center_of_mass(true);
    req.set_com_jacobian(true);
    req.set_centroidal(true);
    req.set_centroidal_momentum(true);
    v1::KinematicsResponse resp;
    {
      grpc::ClientContext ctx;
      const grpc::Status st = stub.Kinematics(&ctx, req, &resp);
      ASSERT_TRUE(st.ok()) << st.error_message();
    }
    const std::size_t L = links.size();
    ASSERT_EQ(static_cast<std::size_t>(resp.rotation_size()), count * L * 9);
    ASSERT_EQ(static_cast<std::size_t>(resp.jacobian_size()), count * L * 6 * nv);
    ASSERT_EQ(resp.frame_origins_size(), count * (m.n + 2) * 3);
    Data d(m);
    const double h = 1e-6;
    for (int k = 0; k < count; ++k) {
      const auto o = static_cast<std::size_t>(k);
      const Eigen::Map<const Eigen::VectorXd> q(s.q.data() + o * nq, m.nq), v(s.v.data() + o * nv, m.nv);
      for (std::size_t f = 0; f < L; ++f) {
        const std::size_t b = o * L + f;
        const Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>> R(resp.rotation().data() +
                                                                               9 * b);
        const Eigen::Map<const Eigen::Vector3d> p(resp.origin().data() + 3 * b);
        const Eigen::Map<const RowMajor> J(resp.jacobian().data() + 6 * nv * b, 6, m.nv);
        int frame = -1;
        Eigen::Matrix3d Rf = Eigen::Matrix3d::Identity();
        Eigen::Vector3d pf = Eigen::Vector3d::Zero();
        for (const FixedFrameSpec& fixed : m.spec.fixed_frames) {
          if (fixed.name == links[f]) frame = fixed.joint, Rf = fixed.rotation, pf = fixed.origin;
        }
        if (frame < 0) frame = frameIndex(m, links[f]);
        const auto pose = [&](const Eigen::VectorXd& qq, Eigen::Matrix3d& Rw, Eigen::Vector3d& pw) {
          Eigen::Matrix3d Rl;
          Eigen::Vector3d pl;
          framePlacement(m, d, qq, frame, Rl, pl);
          Rw = Rl * Rf;
          pw = pl + Rl * pf;
        };
        Eigen::Matrix3d Rw;
        Eigen::Vector3d pw;
        pose(q, Rw, pw);
        EXPECT_LE((R - Rw).norm(), 1e-12) << links[f];
        EXPECT_LE((p - pw).norm(), 1e-12) << links[f];
        Eigen::MatrixXd Jfd(6, m.nv);
        for (int c = 0; c < m.nv; ++c) {
          Eigen::VectorXd dv = Eigen::VectorXd::Zero(m.nv);
          dv[c] = h;
          Eigen::Matrix3d Rp, Rm;
          Eigen::Vector3d pp, pm;
          pose(integrateConfiguration(m, q, dv, 1.0), Rp, pp);
          pose(integrateConfiguration(m, q, -dv, 1.0), Rm, pm);
          const Eigen::Matrix3d dR = (Rp - Rm) / (2 * h) * Rw.transpose();
          const Eigen::Vector3d w(dR(2, 1), dR(0, 2), dR(1, 0));
          const Eigen::Vector3d dp = (pp + Rp * point - pm - Rm * point) / (2 * h);
          Jfd.col(c) << w, dp;
        }
        if (reference == v1::REFERENCE_FRAME_LOCAL) {
          Jfd.topRows<3>() = (Rw.transpose() * Jfd.topRows<3>()).eval();
          Jfd.bottomRows<3>() = (Rw.transpose() * Jfd.bottomRows<3>()).eval();
        }
        EXPECT_LE((J - Jfd).norm(), 1e-6 * (1.0 + J.norm())) << links[f] << " state " << k;
      }
      // the centre of mass, its Jacobian, A_G and h_G: the core's
      computeCentroidalMapTimeVariation(m, d, q, v);
      test::expectClose(resp.com().data() + 3 * o, d.com.data(), 3, "com");
      EXPECT_NEAR(resp.mass(k), d.mass, 1e-12);
      const Eigen::MatrixXd Jcom = d.Jcom, Ag = d.Ag;
      const Eigen::Matrix<double, 6, 1> hg = d.hg;
      EXPECT_LE((Eigen::Map<const RowMajor>(resp.com_jacobian().data() + o * 3 * nv, 3, m.nv) - Jcom).norm(),
                1e-12);
      EXPECT_LE((Eigen::Map<const RowMajor>(resp.centroidal().data() + o * 6 * nv, 6, m.nv) - Ag).norm(),
                1e-12);
      test::expectClose(resp.centroidal_momentum().data() + 6 * o, hg.data(), 6, "h_G");
    }
  }
}

TEST_F(ServerTrees, SeveralFramesAndTheCentroidalTermsEqualTheCore) {
  checkFrames(*stub_, id_, model_, {"FL_FOOT", "HR_LOWER_LEG", "base_link", "HR_FOOT"}, 13);
  // ANYmal C: fixed frames turned against their links (RH_shank_fixed by 90 degrees about z)
  UrdfOptions o;
  o.root = RootJoint::Floating;
  const std::string anymal = std::string(DENOC_MODELS_DIR) + "/trees/anymal_c.urdf";
  const Model m = buildModelFromUrdfFile(anymal, o);
  v1::RegisterModelResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->RegisterModel(&ctx, registration(anymal, v1::ROOT_JOINT_FLOATING), &resp).ok());
  bool turned = false;
  for (const FixedFrameSpec& f : m.spec.fixed_frames)
    turned |= f.name == "RH_shank_fixed" && !f.rotation.isIdentity(1e-9);
  ASSERT_TRUE(turned);
  checkFrames(*stub_, resp.model_id(), m, {"RH_shank_fixed", "LF_FOOT", "RH_FOOT"}, 14);
}

TEST_F(ServerTrees, AWrenchInAFixedFramesAxesEqualsItInWorldAxes) {
  // the same wrench on ANYmal's RH_shank_fixed (turned against its link), once in its own axes and once
  // turned into world axes by the frame's pose: the same torques
  UrdfOptions o;
  o.root = RootJoint::Floating;
  const std::string anymal = std::string(DENOC_MODELS_DIR) + "/trees/anymal_c.urdf";
  const Model m = buildModelFromUrdfFile(anymal, o);
  v1::RegisterModelResponse reg;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->RegisterModel(&ctx, registration(anymal, v1::ROOT_JOINT_FLOATING), &reg).ok());
  }
  const States s = randomStates(m, 1, 29);
  FixedFrameSpec shank;
  for (const FixedFrameSpec& f : m.spec.fixed_frames) {
    if (f.name == "RH_shank_fixed") shank = f;
  }
  Data d(m);
  Eigen::Matrix3d Rl;
  Eigen::Vector3d pl;
  framePlacement(m, d, Eigen::Map<const Eigen::VectorXd>(s.q.data(), m.nq), shank.joint, Rl, pl);
  const Eigen::Matrix3d Rw = Rl * shank.rotation;
  Eigen::Matrix<double, 6, 1> local;
  local << 0.5, -1.0, 2.0, 10.0, -20.0, 30.0;
  Eigen::Matrix<double, 6, 1> world;
  world << Rw * local.head<3>(), Rw * local.tail<3>();
  std::vector<double> tau[2];
  for (int pass = 0; pass < 2; ++pass) {
    v1::InverseDynamicsRequest req;
    req.set_model_id(reg.model_id());
    req.set_count(1);
    req.set_dof(static_cast<std::uint32_t>(m.nv));
    req.mutable_q()->Add(s.q.begin(), s.q.end());
    req.mutable_qd()->Add(s.v.begin(), s.v.end());
    req.mutable_qdd()->Add(s.a.begin(), s.a.end());
    v1::LinkWrench* w = req.add_wrenches();
    w->set_link("RH_shank_fixed");
    w->set_reference(pass == 0 ? v1::REFERENCE_FRAME_LOCAL : v1::REFERENCE_FRAME_BASE);
    const Eigen::Matrix<double, 6, 1>& values = pass == 0 ? local : world;
    w->mutable_wrench()->Add(values.data(), values.data() + 6);
    v1::InverseDynamicsResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->InverseDynamics(&ctx, req, &resp).ok());
    tau[pass].assign(resp.tau().begin(), resp.tau().end());
  }
  test::expectClose(tau[0].data(), tau[1].data(), tau[1].size(), "tau, local against world axes", 1e-11);
  // and neither is the torque without the wrench
  Data d2(m);
  const Eigen::VectorXd free = inverseDynamics(m, d2, Eigen::Map<const Eigen::VectorXd>(s.q.data(), m.nq),
                                               Eigen::Map<const Eigen::VectorXd>(s.v.data(), m.nv),
                                               Eigen::Map<const Eigen::VectorXd>(s.a.data(), m.nv));
  EXPECT_GT((Eigen::Map<const Eigen::VectorXd>(tau[0].data(), m.nv) - free).norm(), 1.0);
}

TEST_F(ServerTrees, DerivativesAndRolloutsInTheTangentSpaceEqualTheCore) {
  const Model& m = model_;
  const int count = 2;
  const States s = randomStates(m, count, 17);
  Data d(m);
  {
    v1::DerivativesRequest req;
    req.set_model_id(id_);
    req.set_count(count);
    req.set_dof(18);
    req.set_of(v1::DERIVATIVE_OF_INVERSE_DYNAMICS);
    req.mutable_q()->Add(s.q.begin(), s.q.end());
    req.mutable_qd()->Add(s.v.begin(), s.v.end());
    req.mutable_qdd()->Add(s.a.begin(), s.a.end());
    v1::DerivativesResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status st = stub_->Derivatives(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(resp.dtau_dq_size(), count * 324);
    for (int k = 0; k < count; ++k) {
      const auto o = static_cast<std::size_t>(k);
      computeInverseDynamicsDerivatives(m, d, Eigen::Map<const Eigen::VectorXd>(s.q.data() + o * 19, 19),
                                        Eigen::Map<const Eigen::VectorXd>(s.v.data() + o * 18, 18),
                                        Eigen::Map<const Eigen::VectorXd>(s.a.data() + o * 18, 18));
      EXPECT_LE((Eigen::Map<const RowMajor>(resp.dtau_dq().data() + o * 324, 18, 18) - d.dtau_dq).norm(),
                1e-11 * (1 + d.dtau_dq.norm()));
      EXPECT_LE((Eigen::Map<const RowMajor>(resp.dtau_dqd().data() + o * 324, 18, 18) - d.dtau_dqd).norm(),
                1e-11 * (1 + d.dtau_dqd.norm()));
    }
  }
  {
    const int T = 5;
    const double dt = 0.002;
    v1::RolloutRequest req = soloRollout(id_, s, count, T, dt);
    const std::vector<double> x0(req.x0().begin(), req.x0().end());
    std::vector<double> u(static_cast<std::size_t>(count * T * 12));
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = std::sin(0.7 * static_cast<double>(i));
    req.mutable_u()->Add(u.begin(), u.end());
    v1::RolloutResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status st = stub_->Rollout(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(resp.states_size(), count * (T + 1) * 37);
    ASSERT_EQ(resp.a_size(), count * T * 36 * 36);
    ASSERT_EQ(resp.b_size(), count * T * 36 * 12);
    for (int k = 0; k < count; ++k) {
      const auto uk = static_cast<std::size_t>(k);
      expectRolloutIsTheCores(m, resp, k, T, dt, x0.data() + uk * 37, u.data() + uk * T * 12);
      // the quaternion stays unit along the rollout
      for (int t = 0; t <= T; ++t) {
        EXPECT_NEAR(
            Eigen::Map<const Eigen::Vector4d>(resp.states().data() + (uk * (T + 1) + t) * 37 + 3).norm(), 1.0,
            1e-12);
      }
    }
  }
}

// The core's ExternalWrench of a LinkWrench's values on a named frame of Solo-12: a foot (a fixed frame, the
// point on its lower leg, LOCAL values turned into the lower leg's axes), a link or the root link.
ExternalWrench coreWrench(const Model& m, const v1::ModelInfo& info, const std::string& name,
                          const double* values, bool local) {
  ExternalWrench e;
  e.reference = local ? ReferenceFrame::Local : ReferenceFrame::Base;
  e.wrench = Eigen::Map<const Eigen::Matrix<double, 6, 1>>(values);
  for (const FixedFrameSpec& f : m.spec.fixed_frames) {
    if (f.name != name) continue;
    e.frame = f.joint == kRootLink ? m.n + 1 : f.joint;
    e.point = f.origin;
    if (local) {
      e.wrench.head<3>() = (f.rotation * e.wrench.head<3>()).eval();
      e.wrench.tail<3>() = (f.rotation * e.wrench.tail<3>()).eval();
    }
    return e;
  }
  for (int i = 0; i < info.frames_size(); ++i) {
    if (info.frames(i).name() == name) {
      e.frame = i;
      return e;
    }
  }
  throw std::runtime_error("no frame " + name);
}

void addWrench(google::protobuf::RepeatedPtrField<v1::LinkWrench>* out, const std::string& link,
               const std::vector<double>& values, bool local) {
  v1::LinkWrench* w = out->Add();
  w->set_link(link);
  w->set_reference(local ? v1::REFERENCE_FRAME_LOCAL : v1::REFERENCE_FRAME_BASE);
  w->mutable_wrench()->Add(values.begin(), values.end());
}

std::vector<double> uniformValues(std::size_t n, unsigned seed, double scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

TEST_F(ServerTrees, DerivativesAndRolloutsWithWrenchesEqualTheCore) {
  const Model& m = model_;
  const int count = 3;
  const States s = randomStates(m, count, 23);
  const std::string root_link = info_.frames(m.n + 1).name();
  // per state on a foot (world axes), shared on another foot (its own axes), shared on the root link (world
  // axes) and per state on a lower leg (its axes)
  const std::vector<double> w0 = uniformValues(6u * count, 1, 20.0), w1 = uniformValues(6, 2, 20.0),
                            w2 = uniformValues(6, 3, 5.0), w3 = uniformValues(6u * count, 4, 5.0);
  const std::string leg = info_.frames(5).name();
  const auto wrenchesOf = [&](int k) {
    const auto o = static_cast<std::size_t>(6 * k);
    return std::vector<ExternalWrench>{
        coreWrench(m, info_, kFeet[0], w0.data() + o, false), coreWrench(m, info_, kFeet[3], w1.data(), true),
        coreWrench(m, info_, root_link, w2.data(), false), coreWrench(m, info_, leg, w3.data() + o, true)};
  };
  const auto addAll = [&](google::protobuf::RepeatedPtrField<v1::LinkWrench>* out) {
    addWrench(out, kFeet[0], w0, false);
    addWrench(out, kFeet[3], w1, true);
    addWrench(out, root_link, w2, false);
    addWrench(out, leg, w3, true);
  };
  Data d(m);
  for (bool inverse : {true, false}) {
    v1::DerivativesRequest req;
    req.set_model_id(id_);
    req.set_count(count);
    req.set_dof(18);
    req.set_of(inverse ? v1::DERIVATIVE_OF_INVERSE_DYNAMICS : v1::DERIVATIVE_OF_FORWARD_DYNAMICS);
    req.mutable_q()->Add(s.q.begin(), s.q.end());
    req.mutable_qd()->Add(s.v.begin(), s.v.end());
    if (inverse) {
      req.mutable_qdd()->Add(s.a.begin(), s.a.end());
    } else {
      req.mutable_tau()->Add(s.a.begin(), s.a.end());  // as torques
    }
    addAll(req.mutable_wrenches());
    v1::DerivativesResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status st = stub_->Derivatives(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    for (int k = 0; k < count; ++k) {
      const auto o = static_cast<std::size_t>(k);
      const Eigen::Map<const Eigen::VectorXd> q(s.q.data() + o * 19, 19), v(s.v.data() + o * 18, 18),
          a(s.a.data() + o * 18, 18);
      const std::string what = std::string(inverse ? "ID" : "FD") + " state " + std::to_string(k);
      if (inverse) {
        computeInverseDynamicsDerivatives(m, d, q, v, a, wrenchesOf(k));
      } else {
        computeForwardDynamicsDerivatives(m, d, q, v, a, wrenchesOf(k));
      }
      // element by element
      const auto matrix = [&](const Doubles& got, const Eigen::MatrixXd& want, const char* name) {
        ASSERT_EQ(got.size(), count * 324) << name;
        const RowMajor w = want;
        test::expectClose(got.data() + o * 324, w.data(), 324, what + " " + name, 1e-11);
      };
      if (inverse) {
        matrix(resp.dtau_dq(), d.dtau_dq, "dtau_dq");
        matrix(resp.dtau_dqd(), d.dtau_dqd, "dtau_dqd");
        test::expectClose(resp.tau().data() + o * 18, d.tau.data(), 18, what + " tau", 1e-11);
        // tau is inverse dynamics with the same wrenches
        const Eigen::VectorXd t = inverseDynamics(m, d, q, v, a, wrenchesOf(k));
        test::expectClose(resp.tau().data() + o * 18, t.data(), 18, what + " tau vs inverseDynamics", 1e-11);
      } else {
        matrix(resp.dqdd_dq(), d.dqdd_dq, "dqdd_dq");
        matrix(resp.dqdd_dqd(), d.dqdd_dqd, "dqdd_dqd");
        matrix(resp.dqdd_dtau(), d.Minv, "dqdd_dtau");
        test::expectClose(resp.qdd().data() + o * 18, d.qdd.data(), 18, what + " qdd", 1e-11);
      }
    }
    // the wrenches change the answer (the request without them differs)
    v1::DerivativesRequest bare = req;
    bare.clear_wrenches();
    v1::DerivativesResponse plain;
    grpc::ClientContext ctx2;
    ASSERT_TRUE(stub_->Derivatives(&ctx2, bare, &plain).ok());
    const Doubles& a1 = inverse ? resp.dtau_dq() : resp.dqdd_dq();
    const Doubles& a0 = inverse ? plain.dtau_dq() : plain.dqdd_dq();
    double diff = 0.0;
    for (int i = 0; i < a1.size(); ++i) diff = std::max(diff, std::abs(a1[i] - a0[i]));
    EXPECT_GT(diff, 1e-3);
  }
  {
    const int T = 4;
    const double dt = 0.002;
    v1::RolloutRequest req = soloRollout(id_, s, count, T, dt);
    const std::vector<double> x0(req.x0().begin(), req.x0().end());
    std::vector<double> u(static_cast<std::size_t>(T * 12));
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = std::cos(0.3 * static_cast<double>(i));
    req.mutable_u()->Add(u.begin(), u.end());
    req.set_shared_controls(true);
    addAll(req.mutable_wrenches());  // per rollout (count*6) and shared (6)
    v1::RolloutResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status st = stub_->Rollout(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(resp.states_size(), count * (T + 1) * 37);
    ASSERT_EQ(resp.a_size(), count * T * 36 * 36);
    RolloutWorkspace ws(m);
    RolloutOptions o;
    o.step = dt;
    o.steps = T;
    std::vector<double> states(static_cast<std::size_t>((T + 1) * 37));
    for (int k = 0; k < count; ++k) {
      const auto uk = static_cast<std::size_t>(k);
      expectRolloutIsTheCores(m, resp, k, T, dt, x0.data() + uk * 37, u.data(), wrenchesOf(k));
      const std::string what = "rollout " + std::to_string(k);
      // the first step's end differs from the rollout without wrenches
      rollout(m, ws, o, x0.data() + uk * 37, u.data(), states.data());
      double diff = 0.0;
      for (std::size_t i = 0; i < states.size(); ++i)
        diff = std::max(diff, std::abs(states[i] - resp.states()[static_cast<int>(uk * states.size() + i)]));
      EXPECT_GT(diff, 1e-6) << what;
    }
  }
}

TEST_F(ServerTrees, HostileWrenchesOnDerivativesAndRolloutsAreRefusedByName) {
  const Model& m = model_;
  const int count = 2;
  const States s = randomStates(m, count, 29);
  v1::DerivativesRequest dreq;
  dreq.set_model_id(id_);
  dreq.set_count(count);
  dreq.set_dof(18);
  dreq.mutable_q()->Add(s.q.begin(), s.q.end());
  dreq.mutable_qd()->Add(s.v.begin(), s.v.end());
  dreq.mutable_qdd()->Add(s.a.begin(), s.a.end());
  v1::RolloutRequest rreq = soloRollout(id_, s, count, 2, 0.001, false);
  for (int i = 0; i < count * 2 * 12; ++i) rreq.add_u(0.1);
  const auto both = [&](const std::function<void(google::protobuf::RepeatedPtrField<v1::LinkWrench>*)>& set,
                        grpc::StatusCode code, const std::string& names) {
    v1::DerivativesRequest d = dreq;
    v1::RolloutRequest r = rreq;
    set(d.mutable_wrenches());
    set(r.mutable_wrenches());
    v1::DerivativesResponse dresp;
    v1::RolloutResponse rresp;
    {
      grpc::ClientContext ctx;
      expectRefused(stub_->Derivatives(&ctx, d, &dresp), code, names);
    }
    {
      grpc::ClientContext ctx;
      expectRefused(stub_->Rollout(&ctx, r, &rresp), code, names);
    }
  };
  const std::vector<double> six(6, 1.0);
  // a missing link, named
  both([&](auto* w) { addWrench(w, "NO_SUCH_FOOT", six, false); }, grpc::StatusCode::INVALID_ARGUMENT,
       "NO_SUCH_FOOT");
  // wrong lengths: 5 values, and 3 * 6 for 2 states or rollouts
  both([&](auto* w) { addWrench(w, kFeet[0], std::vector<double>(5, 1.0), false); },
       grpc::StatusCode::INVALID_ARGUMENT, "wrenches[0].wrench has 5 values");
  both([&](auto* w) { addWrench(w, kFeet[1], std::vector<double>(18, 1.0), false); },
       grpc::StatusCode::INVALID_ARGUMENT, "wrenches[0].wrench has 18 values");
  // out of range and not finite
  for (double bad : {1.7e308, -1.7e308, 1e13, std::numeric_limits<double>::quiet_NaN()}) {
    std::vector<double> w = six;
    w[4] = bad;
    both(
        [&](auto* ws) {
          addWrench(ws, kFeet[0], six, false);
          addWrench(ws, kFeet[2], w, true);
        },
        grpc::StatusCode::INVALID_ARGUMENT, "wrenches[1].wrench");
  }
  // more than max_wrenches (64)
  both(
      [&](auto* w) {
        for (int j = 0; j < 65; ++j) addWrench(w, kFeet[j % 4], six, false);
      },
      grpc::StatusCode::RESOURCE_EXHAUSTED, "max_wrenches");
  expectHealthy();
  // and the server still answers a wrench request
  v1::DerivativesRequest ok = dreq;
  addWrench(ok.mutable_wrenches(), kFeet[0], six, false);
  v1::DerivativesResponse resp;
  grpc::ClientContext ctx;
  EXPECT_TRUE(stub_->Derivatives(&ctx, ok, &resp).ok());
}

TEST_F(ServerTrees, StreamPayloadAndSimulationOnATree) {
  const Model& m = model_;
  const States s = randomStates(m, 1, 19);
  // a payload on a foot (its frame) is the core's payload on the lower leg at the foot's placement
  v1::InverseDynamicsRequest req = idRequest(s, 1);
  v1::Payload* p = req.mutable_payload();
  p->set_mass(0.3);
  p->mutable_com()->set_z(0.01);
  p->mutable_inertia()->set_ixx(1e-4);
  p->mutable_inertia()->set_iyy(2e-4);
  p->mutable_inertia()->set_izz(3e-4);
  p->set_link("HL_FOOT");
  v1::InverseDynamicsResponse resp;
  ASSERT_TRUE(call(req, resp).ok());
  FixedFrameSpec foot;
  for (const FixedFrameSpec& f : m.spec.fixed_frames) {
    if (f.name == "HL_FOOT") foot = f;
  }
  Payload core;
  core.mass = 0.3;
  core.com = foot.origin + foot.rotation * Eigen::Vector3d(0, 0, 0.01);
  core.inertia = foot.rotation * Eigen::Vector3d(1e-4, 2e-4, 3e-4).asDiagonal() * foot.rotation.transpose();
  const Model held = attachPayload(m, core, foot.joint);
  Data dh(held);
  const Eigen::Map<const Eigen::VectorXd> q(s.q.data(), 19), v(s.v.data(), 18), a(s.a.data(), 18);
  const Eigen::VectorXd tau_held = inverseDynamics(held, dh, q, v, a);
  expectNear(resp.tau(), tau_held.data(), 18, "tau with a payload on HL_FOOT");
  // an all-zero payload message carries none (the proto's word)
  req.mutable_payload()->Clear();
  ASSERT_TRUE(call(req, resp).ok());
  Data d(m);
  const Eigen::VectorXd tau = inverseDynamics(m, d, q, v, a);
  expectNear(resp.tau(), tau.data(), 18, "tau with an empty payload");

  // the stream: inverse dynamics with a wrench on a foot equals the core's
  {
    grpc::ClientContext ctx;
    auto stream = stub_->Stream(&ctx);
    v1::StreamRequest sr;
    sr.set_model_id(id_);
    sr.set_computation(v1::COMPUTATION_INVERSE_DYNAMICS);
    sr.mutable_q()->Add(s.q.begin(), s.q.end());
    sr.mutable_qd()->Add(s.v.begin(), s.v.end());
    sr.mutable_qdd()->Add(s.a.begin(), s.a.end());
    v1::LinkWrench* w = sr.add_wrenches();
    w->set_link("FR_FOOT");
    for (double x : {0.1, -0.2, 0.3, 1.0, 2.0, 30.0}) w->add_wrench(x);
    ASSERT_TRUE(stream->Write(sr));
    v1::StreamResponse out;
    ASSERT_TRUE(stream->Read(&out));
    stream->WritesDone();
    ASSERT_TRUE(stream->Finish().ok());
    ExternalWrench e;
    for (const FixedFrameSpec& f : m.spec.fixed_frames) {
      if (f.name == "FR_FOOT") e.frame = f.joint, e.point = f.origin;
    }
    e.reference = ReferenceFrame::Base;
    e.wrench << 0.1, -0.2, 0.3, 1.0, 2.0, 30.0;
    const Eigen::VectorXd want = inverseDynamics(m, d, q, v, a, std::vector<ExternalWrench>{e});
    expectNear(out.result(), want.data(), 18, "stream tau");
  }

  // a simulation on the manifold, RK4 and DOPRI5: q has nq values, the quaternion stays unit, the samples
  // are the core's Simulator's bit for bit, and the two integrators agree
  v1::SimulateRequest sim;
  sim.set_model_id(id_);
  sim.set_dof(18);
  sim.mutable_q0()->Add(s.q.begin(), s.q.end());
  sim.mutable_qd0()->Add(s.v.begin(), s.v.end());
  sim.set_t_end(0.05);
  sim.set_dt_out(0.01);
  sim.set_step(1e-4);
  sim.set_rtol(1e-10);
  sim.set_atol(1e-10);
  SimulationResult runs[2];
  for (const v1::Integrator integrator : {v1::INTEGRATOR_RK4, v1::INTEGRATOR_DOPRI5}) {
    sim.set_integrator(integrator);
    grpc::ClientContext ctx;
    auto reader = stub_->Simulate(&ctx, sim);
    v1::SimulateResponse batch;
    std::vector<double> qs, vs;
    while (reader->Read(&batch)) {
      ASSERT_EQ(batch.q_size(), static_cast<int>(batch.count()) * 19);
      ASSERT_EQ(batch.qd_size(), static_cast<int>(batch.count()) * 18);
      for (std::uint32_t k = 0; k < batch.count(); ++k) {
        EXPECT_NEAR(Eigen::Map<const Eigen::Vector4d>(batch.q().data() + 19 * k + 3).norm(), 1.0, 1e-15);
      }
      qs.insert(qs.end(), batch.q().begin(), batch.q().end());
      vs.insert(vs.end(), batch.qd().begin(), batch.qd().end());
    }
    const grpc::Status st = reader->Finish();
    ASSERT_TRUE(st.ok()) << st.error_message();
    SimulationOptions o;
    o.integrator = integrator == v1::INTEGRATOR_RK4 ? Integrator::RK4 : Integrator::DormandPrince45;
    o.t_end = 0.05;
    o.dt_out = 0.01;
    o.step = 1e-4;
    o.rtol = o.atol = 1e-10;
    SimulationResult& want = runs[integrator == v1::INTEGRATOR_RK4 ? 0 : 1];
    want = simulate(m, q, v, o);
    ASSERT_EQ(qs.size(), static_cast<std::size_t>(want.q.size()));
    EXPECT_EQ(want.stats.samples, 6u);
    const RowMajor wq = want.q, wv = want.qd;
    EXPECT_EQ(qs, std::vector<double>(wq.data(), wq.data() + wq.size())) << v1::Integrator_Name(integrator);
    EXPECT_EQ(vs, std::vector<double>(wv.data(), wv.data() + wv.size())) << v1::Integrator_Name(integrator);
  }
  for (Eigen::Index k = 0; k < runs[0].t.size(); ++k) {
    const Eigen::VectorXd dq =
        differenceConfiguration(m, runs[0].q.row(k).transpose(), runs[1].q.row(k).transpose());
    EXPECT_LT(dq.norm(), 1e-8) << "sample " << k;
    EXPECT_LT((runs[0].qd.row(k) - runs[1].qd.row(k)).norm(), 1e-8) << "sample " << k;
  }
}

TEST_F(ServerTrees, HostileShapesAreRefusedByName) {
  const Model& m = model_;
  States s = randomStates(m, 2, 23);
  v1::InverseDynamicsResponse resp;
  // quaternions of norm 0 and 1e300 in the second state
  for (double scale : {0.0, 1e300}) {
    States bad = s;
    for (int i = 3; i < 7; ++i) bad.q[19 + static_cast<std::size_t>(i)] *= scale;
    if (scale == 0.0) bad.q[19 + 6] = 0.0;
    expectRefused(call(idRequest(bad, 2), resp), grpc::StatusCode::INVALID_ARGUMENT, "quaternion");
    expectRefused(call(idRequest(bad, 2), resp), grpc::StatusCode::INVALID_ARGUMENT, "state 1");
  }
  // q with nv values per state (as if nq were nv)
  {
    v1::InverseDynamicsRequest req = idRequest(s, 2);
    req.mutable_q()->Truncate(36);
    expectRefused(call(req, resp), grpc::StatusCode::INVALID_ARGUMENT, "count*nq");
  }
  // dof other than nv
  {
    v1::InverseDynamicsRequest req = idRequest(s, 2);
    req.set_dof(12);
    expectRefused(call(req, resp), grpc::StatusCode::INVALID_ARGUMENT, "dof");
  }
  // a wrench on a missing link, of a wrong length, too many wrenches
  {
    v1::InverseDynamicsRequest req = idRequest(s, 2);
    v1::LinkWrench* w = req.add_wrenches();
    w->set_link("TAIL");
    for (int i = 0; i < 6; ++i) w->add_wrench(1.0);
    expectRefused(call(req, resp), grpc::StatusCode::INVALID_ARGUMENT, "'TAIL'");
    w->set_link("FL_FOOT");
    w->add_wrench(1.0);
    expectRefused(call(req, resp), grpc::StatusCode::INVALID_ARGUMENT, "wrenches[0].wrench");
    w->mutable_wrench()->Truncate(6);
    w->set_wrench(2, 1.7e308 * 10);
    expectRefused(call(req, resp), grpc::StatusCode::INVALID_ARGUMENT, "wrenches[0].wrench");
    req.clear_wrenches();
    for (int j = 0; j < 65; ++j) {
      v1::LinkWrench* x = req.add_wrenches();
      x->set_link("FL_FOOT");
      for (int i = 0; i < 6; ++i) x->add_wrench(0.0);
    }
    expectRefused(call(req, resp), grpc::StatusCode::RESOURCE_EXHAUSTED, "max_wrenches");
  }
  // an unknown frame for kinematics and for a payload
  {
    v1::KinematicsRequest req;
    req.set_model_id(id_);
    req.set_count(2);
    req.set_dof(18);
    req.mutable_q()->Add(s.q.begin(), s.q.end());
    req.add_links("FL_FOOT");
    req.add_links("WING");
    v1::KinematicsResponse kr;
    grpc::ClientContext ctx;
    expectRefused(stub_->Kinematics(&ctx, req, &kr), grpc::StatusCode::INVALID_ARGUMENT, "links[1] 'WING'");
    v1::InverseDynamicsRequest id = idRequest(s, 2);
    id.mutable_payload()->set_mass(1.0);
    id.mutable_payload()->set_link("WING");
    expectRefused(call(id, resp), grpc::StatusCode::INVALID_ARGUMENT, "payload.link");
  }
  // a rollout whose x0 has nv + nv values per rollout
  {
    v1::RolloutRequest req;
    req.set_model_id(id_);
    req.set_count(1);
    req.set_dof(18);
    req.set_steps(1);
    req.set_dt(1e-3);
    for (int i = 0; i < 36; ++i) req.add_x0(0.0);
    for (int i = 0; i < 12; ++i) req.add_u(0.0);
    v1::RolloutResponse rr;
    grpc::ClientContext ctx;
    expectRefused(stub_->Rollout(&ctx, req, &rr), grpc::StatusCode::INVALID_ARGUMENT, "count*(nq+dof)");
  }
  expectHealthy();
}

TEST(ServerTreeLimits, BodiesAndDepthOverTheLimitsAreRefused) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--max-dof", "17", "--max-depth", "4"});
  auto stub = server.stub();
  v1::RegisterModelResponse resp;
  {
    // the floating Solo-12 has 18 velocity coordinates
    grpc::ClientContext ctx;
    const grpc::Status s = stub->RegisterModel(&ctx, registration(kSolo, v1::ROOT_JOINT_FLOATING), &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_NE(s.error_message().find("max_dof = 17"), std::string::npos) << s.error_message();
  }
  {
    // a chain of 5 joints is 5 deep
    grpc::ClientContext ctx;
    const grpc::Status s = stub->RegisterModel(&ctx, test::dhRequest(test::randomChain(5, 2)), &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_NE(s.error_message().find("max_depth = 4"), std::string::npos) << s.error_message();
  }
  {
    // the fixed and the planar Solo-12 fit: 12 and 15 coordinates, legs 3 deep (4 with the planar root)
    for (v1::RootJoint root : {v1::ROOT_JOINT_FIXED, v1::ROOT_JOINT_PLANAR}) {
      grpc::ClientContext ctx;
      const grpc::Status s = stub->RegisterModel(&ctx, registration(kSolo, root), &resp);
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    v1::GetServerInfoResponse info;
    grpc::ClientContext c2;
    ASSERT_TRUE(stub->GetServerInfo(&c2, {}, &info).ok());
    EXPECT_EQ(info.max_depth(), 4u);
    EXPECT_EQ(info.max_wrenches(), 64u);
    EXPECT_EQ(info.max_frames(), 64u);
  }
}

TEST(ServerSerialArm, AnswersAreBitForBitTheCore) {
  // a serial arm's requests are what they were: dof = nq = nv = n, and the answer the core's to the last bit
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  auto stub = server.stub();
  const DHSpec dh = test::randomChain(7, 5);
  v1::RegisterModelResponse reg;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->RegisterModel(&ctx, test::dhRequest(dh), &reg).ok());
  }
  EXPECT_EQ(reg.model().nq(), 7u);
  EXPECT_EQ(reg.model().nv(), 7u);
  EXPECT_EQ(reg.model().root(), v1::ROOT_JOINT_FIXED);
  EXPECT_EQ(reg.model().joints_size(), 7);
  const Model m = buildModelFromDH(dh);
  const std::vector<double> q = test::randomStates(4, 7, 1), qd = test::randomStates(4, 7, 2),
                            qdd = test::randomStates(4, 7, 3);
  v1::InverseDynamicsRequest req;
  req.set_model_id(reg.model_id());
  req.set_count(4);
  req.set_dof(7);
  req.mutable_q()->Add(q.begin(), q.end());
  req.mutable_qd()->Add(qd.begin(), qd.end());
  req.mutable_qdd()->Add(qdd.begin(), qdd.end());
  v1::InverseDynamicsResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->InverseDynamics(&ctx, req, &resp).ok());
  const std::vector<double> want = test::coreID(m, q, qd, qdd);
  ASSERT_EQ(resp.tau_size(), 28);
  for (int i = 0; i < 28; ++i) EXPECT_EQ(resp.tau(i), want[static_cast<std::size_t>(i)]) << i;
}

}  // namespace
}  // namespace denoc
