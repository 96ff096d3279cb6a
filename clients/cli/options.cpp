// What the tool's options name: the states of --states or of the vector options, and the model file MODEL.
#include <iostream>
#include <stdexcept>

#include "commands.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/configuration.hpp"

namespace denoc::cli {

std::vector<State> readStateOptions(const Options& o, int nq, int nv, unsigned fields,
                                    const Eigen::VectorXd& q_default, RootJoint root) {
  if (!o.states.empty()) {
    if (!o.q.empty() || !o.qd.empty() || !o.qdd.empty() || !o.tau.empty()) {
      throw InputError("--states cannot be combined with --q, --qd, --qdd or --tau");
    }
    return readStates(o.states, nq, nv, fields, std::cerr, q_default);
  }
  std::string q_what = "one per joint", v_what = "one per joint";
  if (root == RootJoint::Floating) {
    q_what = "nq: 7 for the floating root, x y z qx qy qz qw, then one per joint";
    v_what = "nv: 6 for the floating root, wx wy wz vx vy vz, then one per joint";
  } else if (root == RootJoint::Planar) {
    q_what = v_what = "3 for the planar root, x y yaw, then one per joint";
  }
  State s;
  s.q = o.q.empty() && q_default.size() == nq ? q_default : vectorOption(o.q, nq, "--q", q_what);
  s.qd = vectorOption(o.qd, nv, "--qd", v_what);
  s.qdd = vectorOption(o.qdd, nv, "--qdd", v_what);
  s.tau = vectorOption(o.tau, nv, "--tau", v_what);
  return {s};
}

std::vector<State> readStateOptions(const Options& o, const Model& model, unsigned fields) {
  // a moving root not given stands at the origin, upright (the identity quaternion); the joints at 0
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(model.nq);
  if (model.root != RootJoint::Fixed) q0.head(model.nqr) = neutralConfiguration(model).head(model.nqr);
  return readStateOptions(o, model.nq, model.nv, fields, q0, model.root);
}

RootJoint rootOption(const Options& o) {
  if (o.floating && o.root != "fixed" && o.root != "floating") {
    throw InputError("--floating contradicts --root " + o.root);
  }
  if (o.floating || o.root == "floating") return RootJoint::Floating;
  if (o.root == "planar") return RootJoint::Planar;
  if (o.root == "fixed") return RootJoint::Fixed;
  throw InputError("--root: '" + o.root + "' is not one of fixed, floating, planar");
}

Model loadModel(const Options& o) {
  UrdfOptions urdf;
  urdf.base_link = o.base_link;
  urdf.tip_link = o.tip_link;
  urdf.root = rootOption(o);
  if (urdf.root != RootJoint::Fixed) {
    std::string ext = o.model.size() >= 5 ? o.model.substr(o.model.size() - 5) : o.model;
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext != ".urdf")
      throw InputError(std::string("--root ") + (urdf.root == RootJoint::Floating ? "floating" : "planar") +
                       ": a moving root is for URDF files only (" + o.model + ")");
  }
  return loadModel(o.model, urdf);
}

std::vector<ExternalWrench> wrenchOptions(const Options& o, const Model& model) {
  std::vector<ExternalWrench> wrenches;
  for (const std::string& text : o.wrenches) {
    const WrenchOption w = parseWrench(text, "--wrench");
    ExternalWrench e;
    e.wrench = w.wrench;
    e.reference = w.local ? ReferenceFrame::Local : ReferenceFrame::Base;
    // the names in the service's order (docs/cli.md): a link, the tip, the root link, a fixed frame
    e.frame = -1;
    for (int i = 0; i < model.n && e.frame < 0; ++i) {
      if (model.spec.joints[static_cast<std::size_t>(i)].link == w.link) e.frame = i;
    }
    if (e.frame < 0 && (w.link.empty() || w.link == "tip")) e.frame = model.n;
    if (e.frame < 0 && w.link == model.spec.root_link) e.frame = model.n + 1;
    for (const FixedFrameSpec& f : model.spec.fixed_frames) {
      if (e.frame >= 0) break;
      if (f.name != w.link) continue;
      // a frame fixed to a link: the wrench acts at its origin; in its own axes, turned into the link's
      e.frame = f.joint >= 0 ? f.joint : model.n + 1;
      e.point = f.origin;
      if (w.local) {
        e.wrench.head<3>() = f.rotation * w.wrench.head<3>();
        e.wrench.tail<3>() = f.rotation * w.wrench.tail<3>();
      }
    }
    if (e.frame < 0) {
      std::string names;
      for (const JointSpec& j : model.spec.joints) names += (names.empty() ? "'" : ", '") + j.link + "'";
      names += ", 'tip', '" + model.spec.root_link + "'";
      for (const FixedFrameSpec& f : model.spec.fixed_frames) names += ", '" + f.name + "'";
      throw InputError("--wrench: '" + w.link + "' is not a frame of model '" + model.spec.name +
                       "' (its links, tip, the root link and its fixed frames: " + names + ")");
    }
    wrenches.push_back(e);
  }
  return wrenches;
}

}  // namespace denoc::cli
