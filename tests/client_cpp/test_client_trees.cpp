// denoc::client on trees and moving roots against a real denocd (docs/trees.md): the robots of
// examples/models/trees registered with a floating (or planar) root through the client, every new field of
// the answers compared element by element with the core computed in this process (the model built from the
// same URDF here): the model's tree, inverse and forward dynamics with external wrenches on named frames, the
// full factor, several kinematics frames, the centre of mass, its Jacobian, the centroidal map and momentum,
// a payload on a named link, derivatives, rollouts, the stream, and batches split above --max-states;
// derivatives and rollouts with external wrenches (cut with their states or rollouts when split); hostile
// shapes refused with INVALID_ARGUMENT naming the field.
#include <algorithm>
#include <functional>
#include <random>
#include <tuple>

#include "client_support.hpp"
#include "denoc/algorithm/centroidal.hpp"
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/client/client.hpp"
#include "denoc/configuration.hpp"
#include "denoc/payload.hpp"
#include "denoc/rollout.hpp"

namespace denoc {
namespace {

using client::Client;
using test::close;
using test::ServerProcess;
using test::TempDir;
using Vector6d = Eigen::Matrix<double, 6, 1>;

const std::string kTrees = std::string(DENOC_MODELS_DIR) + "/trees/";

Model treeModel(const std::string& file, RootJoint root) {
  UrdfOptions o;
  o.root = root;
  return buildModelFromUrdfFile(kTrees + file, o);
}

client::RootJoint clientRoot(RootJoint r) {
  return r == RootJoint::Floating ? client::RootJoint::Floating
         : r == RootJoint::Planar ? client::RootJoint::Planar
                                  : client::RootJoint::Fixed;
}

// count random states of a model: q on its manifold (unit quaternions), v, a and tau uniform
struct States {
  Eigen::MatrixXd Q, V, A, Tau;  // count x nq, count x nv (x3)
};

States randomStates(const Model& model, int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  States s;
  s.Q.resize(count, model.nq);
  s.V.resize(count, model.nv);
  s.A.resize(count, model.nv);
  s.Tau.resize(count, model.nv);
  for (int k = 0; k < count; ++k) {
    s.Q.row(k) = randomConfiguration(model, rng).transpose();
    for (int j = 0; j < model.nv; ++j) {
      s.V(k, j) = u(rng);
      s.A(k, j) = 2.0 * u(rng);
      s.Tau(k, j) = 3.0 * u(rng);
    }
  }
  return s;
}

Eigen::VectorXd row(const Eigen::MatrixXd& m, int k) { return m.row(k).transpose(); }

// the message of the call's Error, or "no error"
template <typename F>
std::pair<grpc::StatusCode, std::string> refusal(F&& f) {
  try {
    f();
  } catch (const client::Error& e) {
    return {e.code(), e.message()};
  }
  return {grpc::StatusCode::OK, "no error"};
}

class ClientTrees : public ::testing::Test {
 protected:
  void SetUp() override {
    // a small --max-states: the batches below are split, and per-state wrenches must be cut with them
    server_ = std::make_unique<ServerProcess>(dir_.str(), dir_.str("store"),
                                              std::vector<std::string>{"--max-states", "3"});
    client_ = std::make_unique<Client>(server_->address());
    id_ =
        client_->registerModelFile(kTrees + "solo12.urdf", "", "", std::nullopt, client::RootJoint::Floating)
            .model_id;
  }
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Client> client_;
  std::string id_;
  Model model_ = treeModel("solo12.urdf", RootJoint::Floating);
};

TEST_F(ClientTrees, ModelInfoDescribesTheTreeAsTheCoreBuildsIt) {
  struct Robot {
    const char* file;
    RootJoint root;
  };
  for (const Robot& r :
       {Robot{"solo12.urdf", RootJoint::Floating}, Robot{"anymal_c.urdf", RootJoint::Floating},
        Robot{"baxter.urdf", RootJoint::Planar}, Robot{"simple_humanoid.urdf", RootJoint::Floating},
        Robot{"baxter.urdf", RootJoint::Fixed}}) {
    SCOPED_TRACE(std::string(r.file) + " root " + std::to_string(static_cast<int>(r.root)));
    const Model m = treeModel(r.file, r.root);
    const client::ModelInfo info =
        client_->registerModelFile(kTrees + r.file, "", "", std::nullopt, clientRoot(r.root)).model;
    EXPECT_EQ(info.nq, m.nq);
    EXPECT_EQ(info.nv, m.nv);
    EXPECT_EQ(info.nu, m.nu);
    EXPECT_EQ(info.dof, m.nv);
    EXPECT_EQ(info.root, clientRoot(r.root));
    EXPECT_EQ(info.depth, m.depth);
    ASSERT_EQ(info.joint_names.size(), static_cast<std::size_t>(m.n));
    const int offset = r.root == RootJoint::Fixed ? 0 : 1;
    ASSERT_EQ(info.joints.size(), static_cast<std::size_t>(m.n + offset));
    if (offset == 1) {
      const client::Joint& root = info.joints[0];
      EXPECT_EQ(root.name, "root_joint");
      EXPECT_EQ(root.type,
                r.root == RootJoint::Floating ? client::JointType::Floating : client::JointType::Planar);
      EXPECT_EQ(root.parent, -1);
      EXPECT_EQ(root.q_index, 0);
      EXPECT_EQ(root.v_index, 0);
      EXPECT_EQ(root.nq, m.nqr);
      EXPECT_EQ(root.nv, m.nr);
      EXPECT_EQ(root.link, m.spec.root_link);
      EXPECT_EQ(root.depth, 1);
    }
    std::vector<int> depth(static_cast<std::size_t>(m.n));
    for (int i = 0; i < m.n; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      const client::Joint& j = info.joints[ui + static_cast<std::size_t>(offset)];
      const JointSpec& spec = m.spec.joints[ui];
      EXPECT_EQ(j.name, spec.name);
      EXPECT_EQ(info.joint_names[ui], spec.name);
      EXPECT_EQ(j.link, spec.link);
      EXPECT_EQ(info.link_names[ui], spec.link);
      EXPECT_EQ(j.type, m.type[ui] == JointType::Revolute ? client::JointType::Revolute
                                                          : client::JointType::Prismatic);
      const int p = m.parent[ui];
      EXPECT_EQ(j.parent, p >= 0 ? p + offset : (offset == 1 ? 0 : -1));
      EXPECT_EQ(j.q_index, m.nqr + i);
      EXPECT_EQ(j.v_index, m.nr + i);
      EXPECT_EQ(j.nq, 1);
      EXPECT_EQ(j.nv, 1);
      depth[ui] = (p >= 0 ? depth[static_cast<std::size_t>(p)] : offset) + 1;
      EXPECT_EQ(j.depth, depth[ui]);
    }
    // frames: the links (0 .. nu-1), "tip" (nu), the root link (nu + 1), then the URDF's fixed frames, each
    // with the joint that moves it
    ASSERT_EQ(info.frames.size(), static_cast<std::size_t>(m.n + 2) + m.spec.fixed_frames.size());
    for (int i = 0; i < m.n; ++i) {
      EXPECT_EQ(info.frames[static_cast<std::size_t>(i)].name,
                m.spec.joints[static_cast<std::size_t>(i)].link);
      EXPECT_EQ(info.frames[static_cast<std::size_t>(i)].joint, i + offset);
      EXPECT_TRUE(info.frames[static_cast<std::size_t>(i)].fixed_to.empty());
    }
    EXPECT_EQ(info.frames[static_cast<std::size_t>(m.n)].name, "tip");
    EXPECT_EQ(info.frames[static_cast<std::size_t>(m.n)].joint, m.n - 1 + offset);
    EXPECT_EQ(info.frames[static_cast<std::size_t>(m.n + 1)].name, m.spec.root_link);
    EXPECT_EQ(info.frames[static_cast<std::size_t>(m.n + 1)].joint, offset == 1 ? 0 : -1);
    for (std::size_t f = 0; f < m.spec.fixed_frames.size(); ++f) {
      const FixedFrameSpec& fixed = m.spec.fixed_frames[f];
      const client::Frame& got = info.frames[static_cast<std::size_t>(m.n + 2) + f];
      EXPECT_EQ(got.name, fixed.name);
      EXPECT_EQ(got.joint, fixed.joint >= 0 ? fixed.joint + offset : (offset == 1 ? 0 : -1));
      EXPECT_EQ(got.fixed_to, fixed.joint >= 0 ? m.spec.joints[static_cast<std::size_t>(fixed.joint)].link
                                               : m.spec.root_link);
    }
    // getModel and listModels describe it the same way
    const client::ModelInfo got = client_->getModel(info.model_id);
    EXPECT_EQ(got.nq, info.nq);
    EXPECT_EQ(got.joints.size(), info.joints.size());
    EXPECT_EQ(got.frames.size(), info.frames.size());
  }
  // a serial arm: nq = nv = nu = dof, a fixed root, a chain
  const client::ModelInfo arm = client_->registerModelFile(test::kPanda, "", test::kTip).model;
  EXPECT_EQ(arm.nq, arm.dof);
  EXPECT_EQ(arm.nv, arm.dof);
  EXPECT_EQ(arm.nu, arm.dof);
  EXPECT_EQ(arm.root, client::RootJoint::Fixed);
  EXPECT_EQ(arm.depth, arm.dof);
  ASSERT_EQ(arm.joints.size(), static_cast<std::size_t>(arm.dof));
  for (int i = 0; i < arm.dof; ++i) EXPECT_EQ(arm.joints[static_cast<std::size_t>(i)].parent, i - 1);
}

TEST_F(ClientTrees, TheOtherRobotsDynamicsAndFramesEqualTheCore) {
  struct Robot {
    const char* file;
    RootJoint root;
  };
  for (const Robot& r : {Robot{"anymal_c.urdf", RootJoint::Floating}, Robot{"baxter.urdf", RootJoint::Planar},
                         Robot{"simple_humanoid.urdf", RootJoint::Floating}}) {
    SCOPED_TRACE(r.file);
    const Model m = treeModel(r.file, r.root);
    Data d(m);
    const client::ModelInfo info =
        client_->registerModelFile(kTrees + r.file, "", "", std::nullopt, clientRoot(r.root)).model;
    const int count = 4;
    const States s = randomStates(m, count, 31);
    // a wrench on the first and on the last link, one per state on the first
    const std::string first = m.spec.joints.front().link, last = m.spec.joints.back().link;
    Eigen::MatrixXd W(count, 6);
    for (int k = 0; k < count; ++k)
      for (int j = 0; j < 6; ++j) W(k, j) = 0.5 * (k + 1) - 0.2 * j;
    Vector6d w2;
    w2 << 0.1, 0.2, 0.3, -1.0, 2.0, 4.0;
    const std::vector<client::LinkWrench> wrenches = {
        client::LinkWrench(first, W),
        client::LinkWrench(last, Eigen::MatrixXd(w2.transpose()), client::Reference::Local)};
    const Eigen::MatrixXd tau = client_->inverseDynamics(info.model_id, s.Q, s.V, s.A, wrenches).tau;
    const Eigen::MatrixXd qdd = client_->forwardDynamics(info.model_id, s.Q, s.V, s.Tau, wrenches).qdd;
    const client::FullFactorResult f = client_->fullFactor(info.model_id, s.Q);
    client::KinematicsOptions o;
    o.links = {first, last, "tip"};
    o.jacobian = o.center_of_mass = true;
    const client::KinematicsResult kin = client_->kinematics(info.model_id, s.Q, o);
    for (int k = 0; k < count; ++k) {
      std::vector<ExternalWrench> core(2);
      core[0].frame = frameIndex(m, first);
      core[0].wrench = W.row(k).transpose();
      core[0].reference = ReferenceFrame::Base;
      core[1].frame = frameIndex(m, last);
      core[1].wrench = w2;
      core[1].reference = ReferenceFrame::Local;
      const Eigen::VectorXd q = row(s.Q, k), v = row(s.V, k);
      EXPECT_TRUE(close(tau.row(k), inverseDynamics(m, d, q, v, row(s.A, k), core).transpose()));
      EXPECT_TRUE(close(qdd.row(k), forwardDynamics(m, d, q, v, row(s.Tau, k), core).transpose(), 1e-9));
      computeFullFactor(m, d, q);
      EXPECT_TRUE(close(f.inertia[static_cast<std::size_t>(k)], d.M));
      EXPECT_TRUE(close(f.d.row(k), d.D.transpose()));
      const int frames[3] = {frameIndex(m, first), frameIndex(m, last), m.n};
      for (int l = 0; l < 3; ++l) {
        const auto b = static_cast<std::size_t>(3 * k + l);
        Eigen::Matrix3d R;
        Eigen::Vector3d p;
        framePlacement(m, d, q, frames[l], R, p);
        EXPECT_TRUE(close(kin.rotation[b], R));
        EXPECT_TRUE(close(kin.origin.row(static_cast<Eigen::Index>(b)), p.transpose()));
        EXPECT_TRUE(
            close(kin.jacobian[b], computeFrameJacobian(m, d, q, frames[l], Eigen::Vector3d::Zero())));
      }
      EXPECT_TRUE(close(kin.com.row(k), computeCenterOfMass(m, d, q).transpose()));
    }
  }
}

TEST_F(ClientTrees, ServerInfoCarriesTheTreeLimits) {
  const client::ServerInfo s = client_->serverInfo();
  EXPECT_GE(s.max_depth, 64u);
  EXPECT_GE(s.max_wrenches, 4u);
  EXPECT_GE(s.max_frames, 4u);
  EXPECT_EQ(s.max_states, 3u);
}

TEST_F(ClientTrees, InverseDynamicsWithWrenchesAndAPayloadEqualTheCore) {
  const int count = 7;  // split into 3 + 3 + 1 by --max-states 3
  const States s = randomStates(model_, count, 11);
  Eigen::MatrixXd W1(count, 6);  // one wrench per state on the front left foot, world axes
  for (int k = 0; k < count; ++k)
    for (int j = 0; j < 6; ++j) W1(k, j) = 0.1 * (k + 1) * (j < 3 ? 0.2 : 5.0) - 0.3 * j;
  Vector6d w2;  // the same for every state on the hind right foot, its own axes
  w2 << 0.05, -0.1, 0.02, 1.5, -2.0, 12.0;
  const std::vector<client::LinkWrench> wrenches = {
      client::LinkWrench("FL_LOWER_LEG", W1),
      client::LinkWrench("HR_LOWER_LEG", Eigen::MatrixXd(w2.transpose()), client::Reference::Local)};
  const client::InverseDynamicsResult r = client_->inverseDynamics(id_, s.Q, s.V, s.A, wrenches);
  ASSERT_EQ(r.tau.rows(), count);
  ASSERT_EQ(r.tau.cols(), model_.nv);
  Data d(model_);
  for (int k = 0; k < count; ++k) {
    std::vector<ExternalWrench> core(2);
    core[0].frame = frameIndex(model_, "FL_LOWER_LEG");
    core[0].wrench = W1.row(k).transpose();
    core[0].reference = ReferenceFrame::Base;
    core[1].frame = frameIndex(model_, "HR_LOWER_LEG");
    core[1].wrench = w2;
    core[1].reference = ReferenceFrame::Local;
    const Eigen::VectorXd want = inverseDynamics(model_, d, row(s.Q, k), row(s.V, k), row(s.A, k), core);
    EXPECT_TRUE(close(r.tau.row(k), want.transpose())) << "state " << k;
  }
  // without wrenches, and one state given as vectors
  const Eigen::VectorXd q0 = row(s.Q, 0), v0 = row(s.V, 0), a0 = row(s.A, 0);
  EXPECT_TRUE(close(client_->inverseDynamics(id_, q0, v0, a0).tau,
                    inverseDynamics(model_, d, q0, v0, a0).transpose()));

  // a backpack on the root link: the core's model with the payload merged into it
  client::Payload p;
  p.mass = 0.7;
  p.com = Eigen::Vector3d(-0.05, 0.01, 0.06);
  p.inertia = Eigen::Vector3d(0.002, 0.003, 0.0015).asDiagonal();
  p.link = "base_link";
  Payload cp;
  cp.mass = p.mass;
  cp.com = p.com;
  cp.inertia = p.inertia;
  const Model heavy = attachPayload(model_, cp, frameIndex(model_, "base_link"));
  Data dh(heavy);
  const Eigen::MatrixXd tau = client_->inverseDynamics(id_, s.Q, s.V, s.A, p).tau;
  for (int k = 0; k < count; ++k) {
    EXPECT_TRUE(
        close(tau.row(k), inverseDynamics(heavy, dh, row(s.Q, k), row(s.V, k), row(s.A, k)).transpose()));
  }
  // the payload changed the answer (the root's weight)
  EXPECT_FALSE(close(tau.row(0), inverseDynamics(model_, d, q0, v0, a0).transpose(), 1e-6));
}

TEST_F(ClientTrees, ForwardDynamicsWithWrenchesEqualsTheCoreOnBothRoutes) {
  const int count = 5;
  const States s = randomStates(model_, count, 12);
  Vector6d w;
  w << 0.0, 0.0, 0.1, 0.5, -0.4, 8.0;
  const std::vector<client::LinkWrench> wrenches = {client::LinkWrench("FR_LOWER_LEG", w)};
  Data d(model_);
  const client::ForwardDynamicsResult r = client_->forwardDynamics(id_, s.Q, s.V, s.Tau, wrenches);
  ASSERT_EQ(r.qdd.rows(), count);
  const client::ForwardDynamicsResult chol =
      client_->forwardDynamics(id_, s.Q, s.V, s.Tau, client::Route::Cholesky);
  for (int k = 0; k < count; ++k) {
    std::vector<ExternalWrench> core(1);
    core[0].frame = frameIndex(model_, "FR_LOWER_LEG");
    core[0].wrench = w;
    core[0].reference = ReferenceFrame::Base;
    const Eigen::VectorXd want = forwardDynamics(model_, d, row(s.Q, k), row(s.V, k), row(s.Tau, k), core);
    EXPECT_TRUE(close(r.qdd.row(k), want.transpose(), 1e-9)) << "state " << k;
    // and inverse dynamics of the answer with the same wrench gives tau back
    EXPECT_TRUE(close(inverseDynamics(model_, d, row(s.Q, k), row(s.V, k), row(r.qdd, k), core),
                      row(s.Tau, k), 1e-9));
    EXPECT_TRUE(close(chol.qdd.row(k),
                      forwardDynamicsCholesky(model_, d, row(s.Q, k), row(s.V, k), row(s.Tau, k)).transpose(),
                      1e-9));
  }
  // wrenches go by the articulated-body route only; Fixman's route is derived for serial chains: refused
  const auto cholesky =
      refusal([&] { client_->forwardDynamics(id_, s.Q, s.V, s.Tau, wrenches, client::Route::Cholesky); });
  EXPECT_EQ(cholesky.first, grpc::StatusCode::INVALID_ARGUMENT) << cholesky.second;
  EXPECT_NE(cholesky.second.find("wrenches"), std::string::npos) << cholesky.second;
  EXPECT_EQ(refusal([&] { client_->forwardDynamics(id_, s.Q, s.V, s.Tau, client::Route::Fixman); }).first,
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ClientTrees, AWrenchOnAFixedFrameActsAtItsOrigin) {
  // FL_FOOT is merged into FL_LOWER_LEG by a fixed joint: a wrench on it is the joint forces J^T w of the
  // Jacobian of the foot's origin (world axes), computed here from the URDF's fixed frame
  const int count = 3;
  const States s = randomStates(model_, count, 20);
  const auto foot = std::find_if(model_.spec.fixed_frames.begin(), model_.spec.fixed_frames.end(),
                                 [](const FixedFrameSpec& f) { return f.name == "FL_FOOT"; });
  ASSERT_NE(foot, model_.spec.fixed_frames.end());
  Vector6d w;
  w << 0.02, -0.01, 0.0, 1.0, 2.0, 9.0;
  const Eigen::MatrixXd with =
      client_->inverseDynamics(id_, s.Q, s.V, s.A, {client::LinkWrench("FL_FOOT", w)}).tau;
  const Eigen::MatrixXd without = client_->inverseDynamics(id_, s.Q, s.V, s.A).tau;
  Data d(model_);
  for (int k = 0; k < count; ++k) {
    const Eigen::MatrixXd J = computeFrameJacobian(model_, d, row(s.Q, k), foot->joint, foot->origin);
    EXPECT_TRUE(close(with.row(k), without.row(k) - (J.transpose() * w).transpose(), 1e-11)) << "state " << k;
  }
}

TEST_F(ClientTrees, FullFactorEqualsTheCoreAlsoForAClientThatDidNotRegisterTheModel) {
  const int count = 4;
  const States s = randomStates(model_, count, 13);
  client::FactorFlags flags;
  flags.inverse = flags.gravity_torque = true;
  Client fresh(server_->address());  // has not seen the model: finds its sizes once (GetModel)
  for (Client* c : {client_.get(), &fresh}) {
    const client::FullFactorResult r = c->fullFactor(id_, s.Q, flags);
    ASSERT_EQ(r.inertia.size(), static_cast<std::size_t>(count));
    Data d(model_);
    for (int k = 0; k < count; ++k) {
      const auto uk = static_cast<std::size_t>(k);
      computeFullFactor(model_, d, row(s.Q, k));
      EXPECT_TRUE(close(r.inertia[uk], d.M));
      EXPECT_TRUE(close(r.u[uk], d.U));
      EXPECT_TRUE(close(r.d.row(k), d.D.transpose()));
      EXPECT_NEAR(r.log_det[k], d.log_det, 1e-12 * std::max(1.0, std::abs(d.log_det)));
      EXPECT_TRUE(close(r.inverse[uk], computeInverseInertia(model_, d, row(s.Q, k)), 1e-10));
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model_.nv);
      EXPECT_TRUE(
          close(r.gravity_torque.row(k), inverseDynamics(model_, d, row(s.Q, k), zero, zero).transpose()));
    }
  }
}

TEST_F(ClientTrees, SeveralFramesCentreOfMassAndCentroidalTermsEqualTheCore) {
  const int count = 5;
  const States s = randomStates(model_, count, 14);
  client::KinematicsOptions o;
  o.links = {"FL_LOWER_LEG", "FR_LOWER_LEG", "HL_LOWER_LEG", "HR_LOWER_LEG", "base_link"};
  o.point = Eigen::Vector3d(0.0, 0.01, -0.16);
  o.jacobian = o.jdot_qd = true;
  o.center_of_mass = o.com_jacobian = o.centroidal = o.centroidal_momentum = true;
  o.all_frames = true;
  const client::KinematicsResult r = client_->kinematics(id_, s.Q, o, s.V);
  const int L = static_cast<int>(o.links.size());
  ASSERT_EQ(r.frames, L);
  ASSERT_EQ(r.rotation.size(), static_cast<std::size_t>(count * L));
  ASSERT_EQ(r.origin.rows(), count * L);
  ASSERT_EQ(r.jacobian.size(), static_cast<std::size_t>(count * L));
  ASSERT_EQ(r.com.rows(), count);
  ASSERT_EQ(r.mass.size(), count);
  ASSERT_EQ(r.com_jacobian.size(), static_cast<std::size_t>(count));
  ASSERT_EQ(r.centroidal.size(), static_cast<std::size_t>(count));
  ASSERT_EQ(r.centroidal_momentum.rows(), count);
  ASSERT_EQ(r.frame_origins.size(), static_cast<std::size_t>(count));
  Data d(model_);
  double total = model_.spec.root_mass;
  for (const JointSpec& j : model_.spec.joints) total += j.mass;
  for (int k = 0; k < count; ++k) {
    const Eigen::VectorXd q = row(s.Q, k), v = row(s.V, k);
    for (int l = 0; l < L; ++l) {
      SCOPED_TRACE("state " + std::to_string(k) + " frame " + o.links[static_cast<std::size_t>(l)]);
      const int f = frameIndex(model_, o.links[static_cast<std::size_t>(l)]);
      const auto b = static_cast<std::size_t>(k * L + l);
      Eigen::Matrix3d R;
      Eigen::Vector3d p;
      framePlacement(model_, d, q, f, R, p);
      EXPECT_TRUE(close(r.rotation[b], R));
      EXPECT_TRUE(close(r.origin.row(static_cast<Eigen::Index>(b)), p.transpose()));
      EXPECT_TRUE(close(r.jacobian[b], computeFrameJacobian(model_, d, q, f, o.point)));
      EXPECT_TRUE(close(r.jdot_qd.row(static_cast<Eigen::Index>(b)),
                        computeFrameJdotQd(model_, d, q, v, f, o.point).transpose(), 1e-11));
    }
    const auto uk = static_cast<std::size_t>(k);
    EXPECT_TRUE(close(r.com.row(k), computeCenterOfMass(model_, d, q).transpose()));
    EXPECT_NEAR(r.mass[k], total, 1e-12 * total);
    EXPECT_TRUE(close(r.com_jacobian[uk], computeCenterOfMassJacobian(model_, d, q)));
    // rows [angular; linear] about the centre of mass, as the core's A_G; h_G = A_G v
    const Eigen::MatrixXd Ag = computeCentroidalMap(model_, d, q);
    EXPECT_TRUE(close(r.centroidal[uk], Ag));
    EXPECT_TRUE(close(r.centroidal_momentum.row(k), (Ag * v).transpose(), 1e-11));
    // and its linear rows are the total mass times the centre of mass's velocity
    EXPECT_TRUE(close(r.centroidal_momentum.row(k).tail(3),
                      (total * computeCenterOfMassJacobian(model_, d, q) * v).transpose(), 1e-11));
    // every frame: the links, the tip and the root link
    ASSERT_EQ(r.frame_origins[uk].rows(), model_.n + 2);
    for (int f = 0; f < model_.n + 2; ++f) {
      Eigen::Matrix3d R;
      Eigen::Vector3d p;
      framePlacement(model_, d, q, f, R, p);
      EXPECT_TRUE(close(r.frame_origins[uk].row(f), p.transpose()));
      EXPECT_TRUE(close(r.frame_rotations[uk][static_cast<std::size_t>(f)], R));
    }
  }
  // one frame by `link` in the frame's own axes
  client::KinematicsOptions one;
  one.link = "HL_UPPER_LEG";
  one.jacobian = true;
  one.reference = client::Reference::Local;
  const client::KinematicsResult r1 = client_->kinematics(id_, s.Q, one);  // without Qd: dof from the model
  ASSERT_EQ(r1.jacobian.size(), static_cast<std::size_t>(count));
  EXPECT_TRUE(
      close(r1.jacobian[2], computeFrameJacobian(model_, d, row(s.Q, 2), frameIndex(model_, "HL_UPPER_LEG"),
                                                 Eigen::Vector3d::Zero(), ReferenceFrame::Local)));
}

TEST_F(ClientTrees, DerivativesInTheTangentSpaceEqualTheCore) {
  const int count = 4;
  const States s = randomStates(model_, count, 15);
  const client::DerivativesResult id = client_->inverseDynamicsDerivatives(id_, s.Q, s.V, s.A);
  const client::DerivativesResult fd = client_->forwardDynamicsDerivatives(id_, s.Q, s.V, s.Tau);
  ASSERT_EQ(id.dtau_dq.size(), static_cast<std::size_t>(count));
  ASSERT_EQ(fd.dqdd_dq.size(), static_cast<std::size_t>(count));
  Data d(model_);
  for (int k = 0; k < count; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    computeInverseDynamicsDerivatives(model_, d, row(s.Q, k), row(s.V, k), row(s.A, k));
    EXPECT_TRUE(close(id.dtau_dq[uk], d.dtau_dq));
    EXPECT_TRUE(close(id.dtau_dqd[uk], d.dtau_dqd));
    EXPECT_TRUE(close(id.tau.row(k), d.tau.transpose()));
    computeForwardDynamicsDerivatives(model_, d, row(s.Q, k), row(s.V, k), row(s.Tau, k));
    EXPECT_TRUE(close(fd.dqdd_dq[uk], d.dqdd_dq, 1e-10));
    EXPECT_TRUE(close(fd.dqdd_dqd[uk], d.dqdd_dqd, 1e-10));
    EXPECT_TRUE(close(fd.dqdd_dtau[uk], d.Minv, 1e-10));
    EXPECT_TRUE(close(fd.qdd.row(k), d.qdd.transpose(), 1e-10));
  }
}

// K rollouts of T steps from random states under constant torques, against the core's rollout of each
void checkRollouts(Client& c, const std::string& id, const Model& model, int K, int T, unsigned seed) {
  SCOPED_TRACE(std::to_string(K) + " rollouts of " + std::to_string(T) + " steps");
  const int nq = model.nq, nv = model.nv, nu = model.nu;
  const States s = randomStates(model, K, seed);
  Eigen::MatrixXd X0(K, nq + nv);
  X0 << s.Q, 0.3 * s.V;
  std::vector<Eigen::MatrixXd> U;
  for (int k = 0; k < K; ++k) U.push_back(Eigen::MatrixXd::Constant(T, nu, 0.1 * (k + 1)));
  client::RolloutOptions o;
  o.steps = static_cast<std::uint32_t>(T);
  o.dt = 0.01;
  o.linearize = true;
  const client::RolloutResult r = c.rollout(id, X0, U, o);
  ASSERT_EQ(r.states.size(), static_cast<std::size_t>(K));
  ASSERT_EQ(r.A.size(), static_cast<std::size_t>(K));
  RolloutWorkspace ws(model);
  RolloutOptions co;
  co.step = 0.01;
  co.steps = static_cast<std::size_t>(T);
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for (int k = 0; k < K; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    const Eigen::VectorXd x0 = row(X0, k);
    const RowMajor u = U[uk];
    RowMajor states(T + 1, nq + nv);
    std::vector<double> A(static_cast<std::size_t>(T * 4 * nv * nv)),
        B(static_cast<std::size_t>(T * 2 * nv * nu));
    rollout(model, ws, co, x0.data(), u.data(), states.data(), A.data(), B.data());
    ASSERT_EQ(r.states[uk].rows(), T + 1);
    ASSERT_EQ(r.states[uk].cols(), nq + nv);
    EXPECT_TRUE(close(r.states[uk], states));
    ASSERT_EQ(r.A[uk].size(), static_cast<std::size_t>(T));
    for (int t = 0; t < T; ++t) {
      const auto ut = static_cast<std::size_t>(t);
      const auto a0 = A.begin() + t * 4 * nv * nv, b0 = B.begin() + t * 2 * nv * nu;
      EXPECT_TRUE(
          close(r.A[uk][ut], test::fromFlat(std::vector<double>(a0, a0 + 4 * nv * nv), 2 * nv, 2 * nv)));
      ASSERT_EQ(r.B[uk][ut].cols(), nu);
      EXPECT_TRUE(close(r.B[uk][ut], test::fromFlat(std::vector<double>(b0, b0 + 2 * nv * nu), 2 * nv, nu)));
    }
    EXPECT_NEAR(r.states[uk].row(T).segment(3, 4).norm(), 1.0, 1e-12);  // the quaternion stays a unit one
  }
}

TEST_F(ClientTrees, RolloutsOnTheManifoldEqualTheCore) {
  checkRollouts(*client_, id_, model_, 1, 3, 16);  // 3 states: one call
  checkRollouts(*client_, id_, model_, 5, 1, 19);  // 5 rollouts of 1 step: split 3 + 2
}

// Solo-12's feet (fixed frames: the point on the lower leg, LOCAL values turned into its axes) and links as
// the core's ExternalWrench, row k of each LinkWrench (or its one row).
std::vector<ExternalWrench> coreWrenches(const Model& model, const std::vector<client::LinkWrench>& ws,
                                         int k) {
  std::vector<ExternalWrench> out;
  for (const client::LinkWrench& w : ws) {
    ExternalWrench e;
    const bool local = w.reference == client::Reference::Local;
    e.reference = local ? ReferenceFrame::Local : ReferenceFrame::Base;
    e.wrench = w.wrench.row(w.wrench.rows() == 1 ? 0 : k).transpose();
    bool fixed = false;
    for (const FixedFrameSpec& f : model.spec.fixed_frames) {
      if (f.name != w.link) continue;
      fixed = true;
      e.frame = f.joint == kRootLink ? model.n + 1 : f.joint;
      e.point = f.origin;
      if (local) {
        e.wrench.head<3>() = (f.rotation * e.wrench.head<3>()).eval();
        e.wrench.tail<3>() = (f.rotation * e.wrench.tail<3>()).eval();
      }
    }
    if (!fixed) e.frame = frameIndex(model, w.link);
    out.push_back(e);
  }
  return out;
}

TEST_F(ClientTrees, DerivativesAndRolloutsWithWrenchesEqualTheCore) {
  const int count = 5;  // split 3 + 2 by --max-states 3: per-state wrenches cut with the states
  const States s = randomStates(model_, count, 31);
  Eigen::MatrixXd W0(count, 6), W3(count, 6);
  for (int k = 0; k < count; ++k) {
    for (int j = 0; j < 6; ++j) {
      W0(k, j) = std::sin(1.0 + k + 0.7 * j) * (j < 3 ? 0.5 : 15.0);
      W3(k, j) = std::cos(2.0 + k - 0.3 * j) * (j < 3 ? 0.3 : 4.0);
    }
  }
  Vector6d w1, w2;
  w1 << 0.05, -0.1, 0.02, 1.5, -2.0, 12.0;
  w2 << 0.3, 0.1, -0.2, 4.0, 2.0, -6.0;
  const std::vector<client::LinkWrench> wrenches = {
      client::LinkWrench("FL_FOOT", W0),                                                         // world axes
      client::LinkWrench("HR_FOOT", Eigen::MatrixXd(w1.transpose()), client::Reference::Local),  // its axes
      client::LinkWrench("base_link", Eigen::MatrixXd(w2.transpose())),
      client::LinkWrench("FR_LOWER_LEG", W3, client::Reference::Local)};
  const client::DerivativesResult id =
      client_->inverseDynamicsDerivatives(id_, s.Q, s.V, s.A, std::nullopt, Eigen::MatrixXd(), wrenches);
  const client::DerivativesResult fd =
      client_->forwardDynamicsDerivatives(id_, s.Q, s.V, s.Tau, std::nullopt, Eigen::MatrixXd(), wrenches);
  ASSERT_EQ(id.dtau_dq.size(), static_cast<std::size_t>(count));
  ASSERT_EQ(fd.dqdd_dq.size(), static_cast<std::size_t>(count));
  const client::DerivativesResult plain = client_->inverseDynamicsDerivatives(id_, s.Q, s.V, s.A);
  Data d(model_);
  for (int k = 0; k < count; ++k) {
    SCOPED_TRACE("state " + std::to_string(k));
    const auto uk = static_cast<std::size_t>(k);
    const std::vector<ExternalWrench> core = coreWrenches(model_, wrenches, k);
    computeInverseDynamicsDerivatives(model_, d, row(s.Q, k), row(s.V, k), row(s.A, k), core);
    EXPECT_TRUE(close(id.dtau_dq[uk], d.dtau_dq));
    EXPECT_TRUE(close(id.dtau_dqd[uk], d.dtau_dqd));
    EXPECT_TRUE(close(id.tau.row(k), d.tau.transpose()));
    EXPECT_FALSE(close(plain.dtau_dq[uk], d.dtau_dq, 1e-6));  // the wrenches change dtau/dq
    computeForwardDynamicsDerivatives(model_, d, row(s.Q, k), row(s.V, k), row(s.Tau, k), core);
    EXPECT_TRUE(close(fd.dqdd_dq[uk], d.dqdd_dq, 1e-10));
    EXPECT_TRUE(close(fd.dqdd_dqd[uk], d.dqdd_dqd, 1e-10));
    EXPECT_TRUE(close(fd.dqdd_dtau[uk], d.Minv, 1e-10));
    EXPECT_TRUE(close(fd.qdd.row(k), d.qdd.transpose(), 1e-10));
  }

  // rollouts: K = 4 of T = 1 step (split 3 + 1), one wrench per rollout and shared ones
  const int K = 4, T = 1, nq = model_.nq, nv = model_.nv, nu = model_.nu;
  Eigen::MatrixXd X0(K, nq + nv);
  X0 << s.Q.topRows(K), 0.3 * s.V.topRows(K);
  std::vector<Eigen::MatrixXd> U;
  for (int k = 0; k < K; ++k) U.push_back(Eigen::MatrixXd::Constant(T, nu, 0.2 * (k - 1)));
  client::RolloutOptions o;
  o.steps = T;
  o.dt = 0.01;
  o.linearize = true;
  o.wrenches = {client::LinkWrench("FL_FOOT", Eigen::MatrixXd(W0.topRows(K))),
                client::LinkWrench("HR_FOOT", Eigen::MatrixXd(w1.transpose()), client::Reference::Local)};
  const client::RolloutResult r = client_->rollout(id_, X0, U, o);
  ASSERT_EQ(r.states.size(), static_cast<std::size_t>(K));
  RolloutWorkspace ws(model_);
  RolloutOptions co;
  co.step = 0.01;
  co.steps = T;
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for (int k = 0; k < K; ++k) {
    SCOPED_TRACE("rollout " + std::to_string(k));
    const auto uk = static_cast<std::size_t>(k);
    const std::vector<ExternalWrench> core = coreWrenches(model_, o.wrenches, k);
    const Eigen::VectorXd x0 = row(X0, k);
    const RowMajor u = U[uk];
    RowMajor states(T + 1, nq + nv), A(2 * nv, 2 * nv), B(2 * nv, nu);
    rollout(model_, ws, co, x0.data(), u.data(), states.data(), A.data(), B.data(), nullptr, core.data(),
            static_cast<int>(core.size()));
    EXPECT_TRUE(close(r.states[uk], states));
    EXPECT_TRUE(close(r.A[uk][0], A));
    EXPECT_TRUE(close(r.B[uk][0], B));
  }
}

TEST_F(ClientTrees, HostileWrenchesOnDerivativesAndRolloutsAreRefusedNamingTheField) {
  const States s = randomStates(model_, 2, 37);
  const auto derivatives = [&](const std::vector<client::LinkWrench>& w) {
    return refusal(
        [&] { client_->inverseDynamicsDerivatives(id_, s.Q, s.V, s.A, std::nullopt, Eigen::MatrixXd(), w); });
  };
  const auto rollouts = [&](const std::vector<client::LinkWrench>& w) {
    client::RolloutOptions o;
    o.steps = 1;
    o.wrenches = w;
    Eigen::MatrixXd X0(2, model_.nq + model_.nv);
    X0 << s.Q, s.V;
    return refusal([&] { client_->rollout(id_, X0, {Eigen::MatrixXd::Zero(1, model_.nu)}, o); });
  };
  const Eigen::MatrixXd six = Eigen::MatrixXd::Ones(1, 6);
  for (const auto& call :
       {std::function<std::pair<grpc::StatusCode, std::string>(const std::vector<client::LinkWrench>&)>(
            derivatives),
        std::function<std::pair<grpc::StatusCode, std::string>(const std::vector<client::LinkWrench>&)>(
            rollouts)}) {
    auto [code, message] = call({client::LinkWrench("NO_SUCH_FOOT", six)});
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_NE(message.find("NO_SUCH_FOOT"), std::string::npos) << message;
    Eigen::MatrixXd huge = six;
    huge(0, 3) = 1.7e308;
    std::tie(code, message) = call({client::LinkWrench("FL_FOOT", huge)});
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_NE(message.find("wrenches[0].wrench"), std::string::npos) << message;
    std::tie(code, message) = call({client::LinkWrench("FL_FOOT", Eigen::MatrixXd::Ones(3, 6))});
    EXPECT_EQ(code, grpc::StatusCode::INVALID_ARGUMENT) << message;
    EXPECT_NE(message.find("wrenches[0].wrench has 18 values"), std::string::npos) << message;
    std::vector<client::LinkWrench> many(65, client::LinkWrench("FL_FOOT", six));
    std::tie(code, message) = call(many);
    EXPECT_EQ(code, grpc::StatusCode::RESOURCE_EXHAUSTED) << message;
    EXPECT_NE(message.find("max_wrenches"), std::string::npos) << message;
  }
  // the server is healthy
  EXPECT_EQ(derivatives({client::LinkWrench("FL_FOOT", six)}).first, grpc::StatusCode::OK);
}

TEST_F(ClientTrees, TheStreamTakesWrenches) {
  const States s = randomStates(model_, 2, 17);
  Vector6d w;
  w << 0.1, 0.0, -0.2, 3.0, 1.0, 15.0;
  const std::vector<client::LinkWrench> wrenches = {client::LinkWrench("tip", w, client::Reference::Local)};
  auto stream = client_->openStream();
  Data d(model_);
  std::vector<ExternalWrench> core(1);
  core[0].frame = model_.n;  // the tip frame
  core[0].wrench = w;
  core[0].reference = ReferenceFrame::Local;
  for (int k = 0; k < 2; ++k) {
    const Eigen::VectorXd tau = stream->inverseDynamics(id_, row(s.Q, k), row(s.V, k), row(s.A, k), wrenches);
    EXPECT_TRUE(close(tau, inverseDynamics(model_, d, row(s.Q, k), row(s.V, k), row(s.A, k), core)));
    const Eigen::VectorXd qdd =
        stream->forwardDynamics(id_, row(s.Q, k), row(s.V, k), row(s.Tau, k), wrenches);
    EXPECT_TRUE(close(qdd, forwardDynamics(model_, d, row(s.Q, k), row(s.V, k), row(s.Tau, k), core), 1e-9));
  }
  stream->close();
}

TEST_F(ClientTrees, HostileShapesAreRefusedNamingTheField) {
  const States s = randomStates(model_, 2, 18);
  const auto expectRefusal = [](const std::pair<grpc::StatusCode, std::string>& r,
                                const std::vector<std::string>& words) {
    EXPECT_EQ(r.first, grpc::StatusCode::INVALID_ARGUMENT) << r.second;
    for (const std::string& w : words)
      EXPECT_NE(r.second.find(w), std::string::npos) << w << ": " << r.second;
  };
  for (const double norm : {0.0, 1e300}) {
    SCOPED_TRACE("quaternion norm " + std::to_string(norm));
    Eigen::MatrixXd Q = s.Q;
    Q.row(1).segment(3, 4) = Eigen::RowVector4d(0.0, 0.0, 0.0, norm);
    expectRefusal(refusal([&] { client_->inverseDynamics(id_, Q, s.V, s.A); }), {"q"});
    expectRefusal(refusal([&] { client_->forwardDynamics(id_, Q, s.V, s.Tau); }), {"q"});
    expectRefusal(refusal([&] { client_->fullFactor(id_, Q); }), {"q"});
    client::KinematicsOptions o;
    expectRefusal(refusal([&] { client_->kinematics(id_, Q, o); }), {"q"});
  }
  // q with nv columns (a quaternion's entry missing): refused, naming dof or q
  const auto short_q = refusal([&] { client_->inverseDynamics(id_, s.Q.leftCols(model_.nv), s.V, s.A); });
  EXPECT_EQ(short_q.first, grpc::StatusCode::INVALID_ARGUMENT) << short_q.second;
  EXPECT_TRUE(short_q.second.find("dof") != std::string::npos ||
              short_q.second.find("q") != std::string::npos)
      << short_q.second;
  // an unknown frame name in several kinematics frames, and a wrench on a link the model does not have
  client::KinematicsOptions o;
  o.links = {"FL_LOWER_LEG", "NO_SUCH_FRAME"};
  expectRefusal(refusal([&] { client_->kinematics(id_, s.Q, o, s.V); }), {"links", "NO_SUCH_FRAME"});
  const std::vector<client::LinkWrench> bad = {
      client::LinkWrench("NO_SUCH_LINK", Eigen::MatrixXd::Zero(1, 6))};
  expectRefusal(refusal([&] { client_->inverseDynamics(id_, s.Q, s.V, s.A, bad); }),
                {"wrenches", "NO_SUCH_LINK"});
  expectRefusal(refusal([&] { client_->forwardDynamics(id_, s.Q, s.V, s.Tau, bad); }),
                {"wrenches", "NO_SUCH_LINK"});
  // a wrench of 5 values
  const std::vector<client::LinkWrench> short_wrench = {
      client::LinkWrench("FL_LOWER_LEG", Eigen::MatrixXd::Zero(1, 5))};
  expectRefusal(refusal([&] { client_->inverseDynamics(id_, s.Q, s.V, s.A, short_wrench); }), {"wrenches"});
  // more wrenches or frames than the server's limits: RESOURCE_EXHAUSTED naming the field and the limit
  const client::ServerInfo limits = client_->serverInfo();
  const std::vector<client::LinkWrench> many(limits.max_wrenches + 1,
                                             client::LinkWrench("FL_LOWER_LEG", Eigen::MatrixXd::Zero(1, 6)));
  const auto too_many = refusal([&] { client_->inverseDynamics(id_, s.Q, s.V, s.A, many); });
  EXPECT_EQ(too_many.first, grpc::StatusCode::RESOURCE_EXHAUSTED) << too_many.second;
  EXPECT_NE(too_many.second.find("max_wrenches"), std::string::npos) << too_many.second;
  client::KinematicsOptions crowd;
  crowd.links.assign(limits.max_frames + 1, "FL_LOWER_LEG");
  const auto too_many_frames = refusal([&] { client_->kinematics(id_, s.Q, crowd); });
  EXPECT_EQ(too_many_frames.first, grpc::StatusCode::RESOURCE_EXHAUSTED) << too_many_frames.second;
  EXPECT_NE(too_many_frames.second.find("max_frames"), std::string::npos) << too_many_frames.second;
  // the stream: a zero quaternion ends it with INVALID_ARGUMENT naming q
  {
    auto stream = client_->openStream();
    Eigen::VectorXd q = row(s.Q, 0);
    q.segment(3, 4).setZero();
    const auto bad_stream = refusal([&] { stream->inverseDynamics(id_, q, row(s.V, 0), row(s.A, 0)); });
    EXPECT_EQ(bad_stream.first, grpc::StatusCode::INVALID_ARGUMENT) << bad_stream.second;
    EXPECT_NE(bad_stream.second.find("q"), std::string::npos) << bad_stream.second;
  }
  // a payload on a link the model does not have
  client::Payload p;
  p.mass = 1.0;
  p.link = "NO_SUCH_LINK";
  expectRefusal(refusal([&] { client_->inverseDynamics(id_, s.Q, s.V, s.A, p); }),
                {"payload", "NO_SUCH_LINK"});
}

}  // namespace
}  // namespace denoc
