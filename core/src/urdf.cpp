// URDF import through urdfdom. The policy (what is merged, locked or refused) is described in docs/urdf.md.
#include "denoc/urdf.hpp"

#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "denoc/stop.hpp"
#include "format.hpp"

namespace denoc {

namespace {

using LinkPtr = urdf::LinkConstSharedPtr;
using JointPtr = urdf::JointConstSharedPtr;

// A rigid transform: parent frame <- child frame.
struct Pose {
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  Eigen::Vector3d p = Eigen::Vector3d::Zero();
  Pose operator*(const Pose& b) const { return {R * b.R, R * b.p + p}; }
};

// a name in a message, cut to 64 bytes (names may be up to 4096 bytes long before they are checked)
std::string quoted(const std::string& s) { return "'" + (s.size() > 64 ? s.substr(0, 64) + "..." : s) + "'"; }
std::string jointWho(const urdf::Joint& j) { return "joint " + quoted(j.name); }
std::string linkWho(const urdf::Link& l) { return "link " + quoted(l.name); }

// the shortest text that reads back to x
void requireFinite(double x, const std::string& who, const std::string& what) {
  if (!std::isfinite(x))
    throw ModelError("URDF " + who + ": " + what + " is " + detail::formatNumber(x) +
                     ", not a finite number");
}

Pose toPose(const urdf::Pose& u, const std::string& who, const std::string& what) {
  const auto& t = u.position;
  const auto& r = u.rotation;
  for (double x : {t.x, t.y, t.z}) {
    requireFinite(x, who, what + " xyz");
    if (const std::string why = checkNumber(x, -kMaxLength, kMaxLength, " m"); !why.empty())
      throw ModelError("URDF " + who + ": " + what + " xyz entry " + why);
  }
  for (double x : {r.x, r.y, r.z, r.w}) requireFinite(x, who, what + " rpy");
  Eigen::Quaterniond q(r.w, r.x, r.y, r.z);
  if (!(q.norm() > 0.5)) throw ModelError("URDF " + who + ": " + what + " has an invalid rotation");
  q.normalize();
  Pose pose;
  pose.R = q.toRotationMatrix();
  pose.p = Eigen::Vector3d(t.x, t.y, t.z);
  return pose;
}

Eigen::Vector3d toVec(const urdf::Vector3& v) { return {v.x, v.y, v.z}; }

// a joint axis as a unit vector (zero stays zero); scaled first, so that (1e300, 1e300, 0) does not overflow
Eigen::Vector3d unitAxis(const urdf::Vector3& v) {
  Eigen::Vector3d a = toVec(v);
  const double scale = a.cwiseAbs().maxCoeff();
  if (!(scale > 0.0)) return Eigen::Vector3d::Zero();
  a /= scale;
  return a.normalized();
}

bool isMoving(const urdf::Joint& j) {
  return j.type == urdf::Joint::REVOLUTE || j.type == urdf::Joint::CONTINUOUS ||
         j.type == urdf::Joint::PRISMATIC;
}

std::string typeName(const urdf::Joint& j) {
  switch (j.type) {
    case urdf::Joint::REVOLUTE:
      return "revolute";
    case urdf::Joint::CONTINUOUS:
      return "continuous";
    case urdf::Joint::PRISMATIC:
      return "prismatic";
    case urdf::Joint::FLOATING:
      return "floating";
    case urdf::Joint::PLANAR:
      return "planar";
    case urdf::Joint::FIXED:
      return "fixed";
    default:
      return "unknown";
  }
}

// Motion of a 1-DOF joint at position q, in its joint frame (joint frame <- child frame).
Pose jointMotion(const urdf::Joint& j, double q) {
  Pose m;
  if (j.type == urdf::Joint::FIXED || q == 0.0) return m;
  const Eigen::Vector3d a = unitAxis(j.axis);
  if (j.type == urdf::Joint::PRISMATIC) {
    m.p = a * q;
  } else {
    m.R = Eigen::AngleAxisd(q, a).toRotationMatrix();
  }
  return m;
}

// ---- parsing: the bounded pre-scan, the joint cycles, then urdfdom with its console messages captured

class CaptureHandler : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) {
      // a message quotes names from the file: keep the error text bounded
      if (errors.size() >= 2048) return;
      if (!errors.empty()) errors += "; ";
      errors += text.substr(0, 512);
    }
  }
  std::string errors;
};

std::mutex& parseMutex() {
  static std::mutex m;
  return m;
}

// Counts the steps of the import's loops (every iteration of every loop ticks once) and polls a stop
// condition every 256 of them.
class Ticker {
 public:
  Ticker(const StopCondition* stop, const char* what) : stop_(stop), what_(what) {}
  void tick() {
    if (stop_ && (++steps_ & 255) == 0 && stop_->stopRequested())
      stop_->raise(what_, steps_, total_, "steps");
  }
  void expect(std::uint64_t total) { total_ = std::max(total_, total); }

 private:
  const StopCondition* stop_;
  const char* what_;
  std::uint64_t steps_ = 0, total_ = 0;
};

// The joints of a URDF as urdfdom reads them: each <joint> child of the root <robot>, with its name and the
// link attributes of its first <parent> and first <child> child (urdfdom ignores any later ones).
struct JointEdge {
  std::string joint, parent, child;
  bool parent_seen = false, child_seen = false;
};

// urdfdom links each joint's child link into its parent link's child_links (shared pointers) before it
// checks that the links form a tree, so a cycle of joints (a -> b -> a, or a link that is its own child) is
// a cycle of shared pointers that is never freed: every such document would leak its links, also when
// urdfdom then gives up for want of a root link and returns nothing. And urdfdom frees its tree
// recursively (each link owns its child links), also inside its parser when it gives up after linking the
// joints (two root links, a missing link): a chain thousands of links long overflows a thread's stack.
// Refuse both first, from the joints the pre-scan read (no XML tree of our own): cycles, and trees deeper
// than max_depth joints.
void checkJointTree(const std::vector<JointEdge>& joints, std::size_t max_depth, Ticker& ticker) {
  struct Edge {
    std::string joint, child;
  };
  std::map<std::string, std::vector<Edge>> children;        // parent link -> its joints
  std::map<std::string, std::vector<std::string>> parents;  // child link -> the joints naming it
  for (const JointEdge& j : joints) {
    ticker.tick();
    if (j.joint.empty() || j.parent.empty() || j.child.empty()) continue;  // urdfdom refuses the joint
    children[j.parent].push_back({j.joint, j.child});
    parents[j.child].push_back(j.joint);
  }
  // depth first without recursion; a joint to a link on the current path closes a cycle. The height of a
  // link is the most joints on a path down from it.
  struct Frame {
    std::string link;
    std::size_t next = 0;
    std::size_t height = 0;
  };
  std::map<std::string, int> state;            // 1: on the path, 2: done
  std::map<std::string, std::size_t> heights;  // of the links done
  const auto grow = [&](Frame& f, std::size_t child_height) {
    f.height = std::max(f.height, child_height + 1);
    if (f.height > max_depth) {
      throw ModelError("URDF could not be parsed: the kinematic tree is more than " +
                       std::to_string(max_depth) + " joints deep below link " + quoted(f.link) +
                       " (the limit of a URDF's depth)");
    }
  };
  for (const auto& [root, edges] : children) {
    (void)edges;
    if (state[root] != 0) continue;
    std::vector<Frame> path{{root}};
    state[root] = 1;
    while (!path.empty()) {
      ticker.tick();
      Frame& f = path.back();
      const auto it = children.find(f.link);
      if (it == children.end() || f.next == it->second.size()) {
        state[f.link] = 2;
        heights[f.link] = f.height;
        const std::size_t height = f.height;
        path.pop_back();
        if (!path.empty()) grow(path.back(), height);
        continue;
      }
      const Edge& e = it->second[f.next++];
      const int s = state[e.child];
      if (s == 0) {
        state[e.child] = 1;
        path.push_back({e.child});
        continue;
      }
      if (s == 2) {
        grow(f, heights[e.child]);
        continue;
      }
      // the cycle: from e.child along the path back to it (at most 8 steps spelled out)
      std::size_t k = 0;
      while (path[k].link != e.child) ++k;
      std::string cycle, twice;
      for (std::size_t i = k; i < path.size(); ++i) {
        const std::string& l = path[i].link;
        const std::string& j = i + 1 < path.size() ? children[l][path[i].next - 1].joint : e.joint;
        if (i - k < 8) cycle += quoted(l) + " -(" + quoted(j) + ")-> ";
        if (i - k == 8) cycle += "... -> ";
        if (twice.empty() && parents[l].size() > 1) {
          twice = "; link " + quoted(l) + " is the child of joints " + quoted(parents[l][0]) + " and " +
                  quoted(parents[l][1]);
        }
      }
      throw ModelError("URDF could not be parsed: closed kinematic loop: links and joints " + cycle +
                       quoted(e.child) + twice + " (a URDF must be a tree with one root link)");
    }
  }
}

// `joint_order` receives the names of the joints in the order of the file (the whole-tree import orders the
// children of a link by it; urdfdom keeps them in the order of their names).
urdf::ModelInterfaceSharedPtr parse(const std::string& xml, const XmlLimits& limits, std::size_t max_depth,
                                    const StopCondition* stop, std::vector<std::string>& joint_order) {
  // one bounded pass before any tree is built: limits, DTDs, and the joints for the cycle check
  std::vector<JointEdge> joints;
  bool robot = false;
  bool in_joint = false;  // the last element at depth 2 is a <joint>
  scanXml(
      xml, limits,
      [&](const XmlElement& e) {
        if (e.depth == 1) robot = e.name == "robot";
        if (!robot || e.depth < 2) return;
        if (e.depth == 2) {
          in_joint = e.name == "joint";
          if (in_joint) {
            const XmlAttribute* name = e.find("name");
            joints.push_back({name ? std::string(name->value) : std::string(), {}, {}});
          }
          return;
        }
        if (e.depth != 3 || !in_joint) return;
        JointEdge& j = joints.back();
        const bool parent = e.name == "parent", child = e.name == "child";
        if (!(parent ? !j.parent_seen : child && !j.child_seen)) return;
        (parent ? j.parent_seen : j.child_seen) = true;
        if (const XmlAttribute* link = e.find("link"))
          (parent ? j.parent : j.child) = std::string(link->value);
      },
      stop, "URDF text");
  Ticker ticker(stop, "URDF joint check");
  ticker.expect(5 * joints.size());
  checkJointTree(joints, max_depth, ticker);
  joint_order.clear();
  joint_order.reserve(joints.size());
  for (JointEdge& j : joints) {
    ticker.tick();
    joint_order.push_back(std::move(j.joint));
  }
  std::vector<JointEdge>().swap(joints);

  // urdfdom reports why it failed only through console_bridge: capture that output (a process-wide
  // setting, hence the lock) so that the exception can carry it.
  std::lock_guard<std::mutex> lock(parseMutex());
  if (stop && stop->stopRequested()) stop->raise("URDF parse", 0, 1, "documents");
  static CaptureHandler handler;
  handler.errors.clear();
  console_bridge::OutputHandler* previous = console_bridge::getOutputHandler();
  console_bridge::useOutputHandler(&handler);
  urdf::ModelInterfaceSharedPtr model;
  std::string thrown;
  try {
    model = urdf::parseURDF(xml);
  } catch (const std::exception& e) {
    thrown = e.what();
  } catch (...) {
    thrown = "unknown exception";
  }
  console_bridge::useOutputHandler(previous);
  // urdfdom logs some errors (an unreadable <mass> or <inertia> value, for one) and goes on with a
  // default in place of the bad value: any logged error refuses the file.
  if (!model || !handler.errors.empty() || !thrown.empty()) {
    std::string why = handler.errors;
    if (!thrown.empty()) why += (why.empty() ? "" : "; ") + thrown.substr(0, 512);
    if (why.empty()) why = "urdfdom could not parse it";
    throw ModelError("URDF could not be parsed: " + why);
  }
  return model;
}

// ---- the import

struct Inertia {
  double mass = 0.0;
  Eigen::Vector3d com = Eigen::Vector3d::Zero();      // in the body frame
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();  // about com, body axes
};

// Adds a body of mass m at c (inertia Ic about c, body axes) to acc.
void addInertia(Inertia& acc, double m, const Eigen::Vector3d& c, const Eigen::Matrix3d& Ic) {
  if (m == 0.0) return;
  const double M = acc.mass + m;
  const Eigen::Vector3d C = (acc.mass * acc.com + m * c) / M;
  auto shift = [](double mass, const Eigen::Vector3d& d) {
    return Eigen::Matrix3d(mass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose()));
  };
  acc.inertia = acc.inertia + shift(acc.mass, acc.com - C) + Ic + shift(m, c - C);
  acc.mass = M;
  acc.com = C;
}

// The link's own inertial: validated; mass 0 (or no <inertial>) means a massless frame.
void checkLinkInertial(const urdf::Link& link, double& m, Pose& frame, Eigen::Matrix3d& Ic) {
  m = 0.0;
  Ic.setZero();
  frame = Pose();
  if (!link.inertial) return;
  const urdf::Inertial& in = *link.inertial;
  const std::string who = linkWho(link);
  requireFinite(in.mass, who, "mass");
  for (double x : {in.ixx, in.ixy, in.ixz, in.iyy, in.iyz, in.izz}) requireFinite(x, who, "inertia entry");
  frame = toPose(in.origin, who, "inertial origin");
  Ic << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
  if (in.mass < 0.0)
    throw ModelError("URDF " + who + ": mass is " + detail::formatNumber(in.mass) + ", negative");
  if (in.mass != 0.0) {
    if (const std::string why = checkNumber(in.mass, kMinMass, kMaxMass, " kg (or 0: a massless frame)");
        !why.empty())
      throw ModelError("URDF " + who + ": mass " + why);
  }
  if (in.mass == 0.0) {
    if (!Ic.isZero(0.0)) {
      throw ModelError("URDF " + who +
                       ": mass is 0 but the inertia is not zero (a massless link must have a zero inertia)");
    }
    return;
  }
  // positive semi-definite: a point mass (zero inertia) and a thin rod are physical. The triangle inequality
  // of the principal moments is asked of each body after merging (assemble), the inertia the dynamics use:
  // real files carry sensor links whose CAD inertias break it, harmless once merged into a heavier body.
  // It is checkInertia's last test: its reason means that every other test passed.
  if (const std::string why = checkInertia(Ic, true);
      !why.empty() && why.find("violates the triangle inequality") == std::string::npos) {
    throw ModelError("URDF " + who + ": mass " + detail::formatNumber(in.mass) + ", " + why);
  }
  m = in.mass;
}

void checkJointNumbers(const urdf::Joint& j) {
  const std::string who = jointWho(j);
  toPose(j.parent_to_joint_origin_transform, who, "origin");
  for (double x : {j.axis.x, j.axis.y, j.axis.z}) requireFinite(x, who, "axis entry");
  if (j.limits) {
    for (double x : {j.limits->lower, j.limits->upper}) {
      if (std::isnan(x)) requireFinite(x, who, "position limit");
    }
    if (j.limits->lower == std::numeric_limits<double>::infinity() ||
        j.limits->upper == -std::numeric_limits<double>::infinity()) {
      throw ModelError("URDF " + who + ": position limits [" + detail::formatNumber(j.limits->lower) + ", " +
                       detail::formatNumber(j.limits->upper) +
                       "] are invalid (lower must be below +inf, upper above -inf)");
    }
    if (std::isnan(j.limits->velocity)) requireFinite(j.limits->velocity, who, "velocity limit");
    if (std::isnan(j.limits->effort)) requireFinite(j.limits->effort, who, "effort limit");
  }
  if (j.mimic) {
    requireFinite(j.mimic->multiplier, who, "mimic multiplier");
    requireFinite(j.mimic->offset, who, "mimic offset");
  }
}

class Importer {
 public:
  Importer(const urdf::ModelInterface& model, const UrdfOptions& options, const StopCondition* stop,
           const std::vector<std::string>& joint_order)
      : model_(model), options_(options), ticker_(stop, "URDF import"), joint_order_(joint_order) {}

  ModelSpec run() {
    checkNames();
    base_ = findBase();
    collectSubtree(base_);
    for (const JointPtr& j : subtree_joints_) {
      ticker_.tick();
      checkJointNumbers(*j);
    }
    for (const JointPtr& j : subtree_joints_) {
      if (j->type == urdf::Joint::FLOATING || j->type == urdf::Joint::PLANAR ||
          j->type == urdf::Joint::UNKNOWN) {
        throw ModelError("URDF " + jointWho(*j) + " (child link " + quoted(j->child_link_name) +
                         ") is of type " + typeName(*j) +
                         ": only revolute, continuous, prismatic and fixed joints are supported");
      }
    }
    // one chain (tip_link given, or a serial robot under a fixed root: the importer of chains), or the
    // whole tree (docs/urdf.md, "What is imported")
    const bool fixed = options_.root == RootJoint::Fixed;
    if (!options_.tip_link.empty()) {
      tip_ = findTip();
      chainPath();
    } else if (LinkPtr tip = fixed ? defaultTip() : nullptr) {
      tip_ = std::move(tip);
      chainPath();
    } else {
      whole_tree_ = true;
      wholeTree();
    }
    tree_ = whole_tree_ || !fixed;
    ModelSpec spec = assemble();
    // reported once the import succeeded
    if (options_.notes) options_.notes->insert(options_.notes->end(), notes_.begin(), notes_.end());
    return spec;
  }

 private:
  LinkPtr link(const std::string& name, const std::string& what) const {
    LinkPtr l = model_.getLink(name);
    if (!l)
      throw ModelError("URDF: " + what + " " + quoted(name) + " is not a link of robot " +
                       quoted(model_.getName()));
    return l;
  }

  // every name of the robot, whether on the chain or not (names end up in errors, logs and listings)
  void checkNames() {
    ticker_.expect(8 * (model_.links_.size() + model_.joints_.size()));
    if (const std::string why = checkName(model_.getName()); !why.empty())
      throw ModelError("URDF robot " + why);
    for (const auto& [name, link] : model_.links_) {
      ticker_.tick();
      if (const std::string why = checkName(name); !why.empty()) throw ModelError("URDF link " + why);
    }
    for (const auto& [name, joint] : model_.joints_) {
      ticker_.tick();
      if (const std::string why = checkName(name); !why.empty()) throw ModelError("URDF joint " + why);
    }
  }

  LinkPtr findBase() const {
    if (options_.base_link.empty()) {
      LinkPtr root = model_.getRoot();
      if (!root) throw ModelError("URDF: robot " + quoted(model_.getName()) + " has no root link");
      return root;
    }
    return link(options_.base_link, "base link");
  }

  // Links and joints below the base (depth first, without recursion: a URDF may be a long chain), and each
  // link's rigid head (rigidHead) from its parent's, in one pass.
  void collectSubtree(const LinkPtr& root) {
    std::vector<LinkPtr> stack{root};
    visited_.insert(root->name);
    head_[root.get()] = root;
    while (!stack.empty()) {
      ticker_.tick();
      const LinkPtr l = stack.back();
      stack.pop_back();
      for (auto it = l->child_joints.rbegin(); it != l->child_joints.rend(); ++it) {
        ticker_.tick();
        const JointPtr j = *it;
        subtree_joints_.push_back(j);
        LinkPtr c = model_.getLink(j->child_link_name);
        if (!c)
          throw ModelError("URDF " + jointWho(*j) + ": child link " + quoted(j->child_link_name) +
                           " not found");
        // urdfdom keeps one parent joint per link: a link that is the child of two joints closes a loop
        if (c->parent_joint != j || !visited_.insert(c->name).second) {
          throw ModelError("URDF: closed kinematic loop: link " + quoted(c->name) +
                           " is the child of joint " + quoted(j->name) +
                           (c->parent_joint && c->parent_joint != j
                                ? " and of joint " + quoted(c->parent_joint->name)
                                : std::string(" and is reached twice")) +
                           " (a URDF must be a tree)");
        }
        head_[c.get()] = isMoving(*j) ? c : head_.at(l.get());
        stack.push_back(c);
      }
    }
  }

  // The link whose frame is reached from `l` (a link below the base) through fixed joints only, going up;
  // i.e. the moving link (or the base) that `l` is rigidly attached to when every moving joint counts.
  // Found once per link by collectSubtree: walking up here for each link was quadratic in a long fixed chain.
  LinkPtr rigidHead(const LinkPtr& l) const { return head_.at(l.get()); }

  LinkPtr defaultTip() {
    // Bodies: the base and every child link of a moving joint, each with what hangs from it by fixed joints.
    // The chain ends at the single body with no moving joint below it.
    std::set<std::string> has_moving_child;  // heads with a moving joint hanging from their rigid group
    std::vector<LinkPtr> heads;
    bool any_moving = false;
    for (const JointPtr& j : subtree_joints_) {
      ticker_.tick();
      if (!isMoving(*j)) continue;
      any_moving = true;
      has_moving_child.insert(rigidHead(model_.getLink(j->parent_link_name))->name);
      heads.push_back(model_.getLink(j->child_link_name));
    }
    if (!any_moving) {
      throw ModelError("URDF: no moving (revolute, continuous or prismatic) joint below base link " +
                       quoted(base_->name));
    }
    std::vector<LinkPtr> leaf_heads;
    for (const LinkPtr& h : heads) {
      ticker_.tick();
      if (!has_moving_child.count(h->name)) leaf_heads.push_back(h);
    }
    // several ends: the moving joints branch, the whole tree is imported
    if (leaf_heads.size() != 1) return nullptr;
    return belowFixed(leaf_heads.front());
  }

  // Goes down the fixed joints below `l` while there is no branching: the tip frame of a chain that ends at
  // link l (below which there is no moving joint).
  LinkPtr belowFixed(LinkPtr l) {
    while (l->child_joints.size() == 1) {
      ticker_.tick();
      l = model_.getLink(l->child_joints.front()->child_link_name);
    }
    return l;
  }

  LinkPtr findTip() {
    LinkPtr tip = link(options_.tip_link, "tip link");
    std::set<std::string> seen;
    for (LinkPtr l = tip; l;
         l = l->parent_joint ? model_.getLink(l->parent_joint->parent_link_name) : nullptr) {
      ticker_.tick();
      if (l == base_) return tip;
      if (!seen.insert(l->name).second) {
        throw ModelError("URDF: closed kinematic loop above tip link " + quoted(tip->name) + ": link " +
                         quoted(l->name) + " is its own ancestor (a URDF must be a tree)");
      }
      if (!l->parent_joint) break;
    }
    throw ModelError("URDF: tip link " + quoted(tip->name) + " is not below base link " +
                     quoted(base_->name) + " (the chain from base to tip must go from parent to child)");
  }

  void chainPath() {
    std::vector<JointPtr> path;
    for (LinkPtr l = tip_; l != base_; l = model_.getLink(l->parent_joint->parent_link_name)) {
      ticker_.tick();
      path.push_back(l->parent_joint);
    }
    std::reverse(path.begin(), path.end());
    for (const JointPtr& j : path) {
      ticker_.tick();
      if (!isMoving(*j)) continue;
      if (j->mimic) {
        throw ModelError("URDF " + jointWho(*j) + " mimics joint " + quoted(j->mimic->joint_name) +
                         ": mimic joints on the chain are not supported");
      }
      chain_.push_back(j);
      chain_index_[j->name] = static_cast<int>(chain_.size()) - 1;
    }
    // under a floating or planar root a chain without joints is the root link alone (with what is fixed or
    // locked to it)
    if (chain_.empty() && options_.root == RootJoint::Fixed) {
      throw ModelError("URDF: no moving (revolute, continuous or prismatic) joint between base link " +
                       quoted(base_->name) + " and tip link " + quoted(tip_->name));
    }
  }

  // Every moving joint below the base, depth first from the base with the children of a link in the order
  // of their joints in the file (parents before children: a joint's parent index is below its own). A mimic
  // joint is an independent joint here, reported in options.notes. The tip frame is found below the link of
  // the last joint (or the base when there is none) as for a chain: no moving joint hangs below that link.
  void wholeTree() {
    std::unordered_map<std::string, std::size_t> position;
    position.reserve(joint_order_.size());
    for (std::size_t k = 0; k < joint_order_.size(); ++k) {
      ticker_.tick();
      position.emplace(joint_order_[k], k);
    }
    const auto place = [&](const JointPtr& j) {
      const auto it = position.find(j->name);
      return it == position.end() ? joint_order_.size() : it->second;
    };
    std::vector<LinkPtr> stack{base_};
    std::vector<JointPtr> children;
    while (!stack.empty()) {
      ticker_.tick();
      const LinkPtr l = stack.back();
      stack.pop_back();
      if (l != base_ && isMoving(*l->parent_joint)) {
        const JointPtr& j = l->parent_joint;
        chain_index_[j->name] = static_cast<int>(chain_.size());
        chain_.push_back(j);
        if (j->mimic) {
          notes_.push_back("joint " + quoted(j->name) + " mimics " + quoted(j->mimic->joint_name) +
                           ": loaded as an independent joint");
        }
      }
      children.assign(l->child_joints.begin(), l->child_joints.end());
      std::stable_sort(children.begin(), children.end(),
                       [&](const JointPtr& a, const JointPtr& b) { return place(a) < place(b); });
      for (auto it = children.rbegin(); it != children.rend(); ++it) {
        ticker_.tick();
        stack.push_back(model_.getLink((*it)->child_link_name));
      }
    }
    tip_ = belowFixed(chain_.empty() ? base_ : model_.getLink(chain_.back()->child_link_name));
  }

  // Position at which a joint off the chain is locked.
  double lockPosition(const urdf::Joint& j, int depth = 0) {
    ticker_.tick();
    if (depth > 64) throw ModelError("URDF " + jointWho(j) + ": mimic joints form a cycle");
    if (j.mimic) {
      if (chain_index_.count(j.mimic->joint_name)) {
        throw ModelError("URDF " + jointWho(j) + " (off the chain) mimics joint " +
                         quoted(j.mimic->joint_name) +
                         " of the chain: a branch moved by a chain joint is not supported");
      }
      JointPtr master = model_.getJoint(j.mimic->joint_name);
      if (!master) {
        throw ModelError("URDF " + jointWho(j) + " mimics joint " + quoted(j.mimic->joint_name) +
                         ", which does not exist");
      }
      if (!isMoving(*master)) {
        throw ModelError("URDF " + jointWho(j) + " mimics joint " + quoted(j.mimic->joint_name) +
                         ", which is not a moving joint");
      }
      return j.mimic->multiplier * lockPosition(*master, depth + 1) + j.mimic->offset;
    }
    double q = 0.0;
    if (j.type != urdf::Joint::CONTINUOUS && j.limits && j.limits->lower < j.limits->upper) {
      q = std::clamp(0.0, j.limits->lower, j.limits->upper);
    }
    return q;
  }

  ModelSpec assemble() {
    const int n = static_cast<int>(chain_.size());
    // every link's frame in the frame of the body it belongs to (the base, or the child link of a chain
    // joint), and each body's merged inertia
    std::map<std::string, Pose> in_body;
    std::vector<Inertia> inertia(static_cast<std::size_t>(n));
    std::vector<int> parent(static_cast<std::size_t>(n), kRootLink);  // the body each joint hangs from
    Inertia root;  // the base's body, for a floating or planar root
    const bool moving_root = options_.root != RootJoint::Fixed;
    std::vector<FixedFrameSpec> fixed_frames;

    struct Item {
      LinkPtr link;
      int body;
      Pose T;  // link frame in the body frame
    };
    std::vector<Item> stack{{base_, -1, Pose()}};
    while (!stack.empty()) {
      ticker_.tick();
      const Item item = stack.back();
      stack.pop_back();
      const LinkPtr& l = item.link;
      const int b = item.body;
      in_body[l->name] = item.T;
      // a link merged into body b (neither the base nor a joint's link): a named frame fixed to it
      if (l != base_ && !(l->parent_joint && chain_index_.count(l->parent_joint->name))) {
        fixed_frames.push_back({l->name, b >= 0 ? b : kRootLink, item.T.R, item.T.p});
      }
      double m;
      Pose frame;
      Eigen::Matrix3d Ic;
      checkLinkInertial(*l, m, frame, Ic);
      if ((b >= 0 || moving_root) && m > 0.0) {
        const Pose P = item.T * frame;  // body <- inertial frame
        addInertia(b >= 0 ? inertia[static_cast<std::size_t>(b)] : root, m, P.p, P.R * Ic * P.R.transpose());
      }
      for (auto it = l->child_joints.rbegin(); it != l->child_joints.rend(); ++it) {
        const urdf::Joint& j = **it;
        LinkPtr c = model_.getLink(j.child_link_name);
        const Pose origin = toPose(j.parent_to_joint_origin_transform, jointWho(j), "origin");
        if (auto chain = chain_index_.find(j.name); chain != chain_index_.end()) {
          parent[static_cast<std::size_t>(chain->second)] = b;
          stack.push_back({c, chain->second, Pose()});
        } else if (isMoving(j)) {
          const double q = lockPosition(j);
          if (const std::string why = checkNumber(q, -kMaxLength, kMaxLength); !why.empty())
            throw ModelError("URDF " + jointWho(j) + " (off the chain): lock position " + why);
          stack.push_back({c, b, item.T * origin * jointMotion(j, q)});
        } else {
          stack.push_back({c, b, item.T * origin});
        }
      }
    }

    ModelSpec spec;
    spec.name = model_.getName();
    spec.gravity = options_.gravity.value_or(Eigen::Vector3d(0.0, 0.0, -9.81));
    if (!spec.gravity.allFinite()) throw ModelError("URDF import: gravity has a non-finite entry");
    if (!options_.armature.empty() && static_cast<int>(options_.armature.size()) != n) {
      throw ModelError("URDF import: " + std::to_string(options_.armature.size()) +
                       " armature values given for " + std::to_string(n) + " moving joints");
    }
    for (int i = 0; i < n; ++i) {
      const urdf::Joint& j = *chain_[static_cast<std::size_t>(i)];
      const std::string who = jointWho(j);
      const Pose placement =
          in_body.at(j.parent_link_name) * toPose(j.parent_to_joint_origin_transform, who, "origin");
      JointSpec js;
      js.name = j.name;
      js.link = j.child_link_name;
      js.type = j.type == urdf::Joint::PRISMATIC ? JointType::Prismatic : JointType::Revolute;
      js.rotation = placement.R;
      js.origin = placement.p;
      js.axis = toVec(j.axis);
      if (!(js.axis.norm() > 1e-12)) throw ModelError("URDF " + who + ": axis is zero");
      if (j.limits) {
        // URDF defaults lower and upper to 0 when absent: a zero-width range means "no position limit".
        if (j.type != urdf::Joint::CONTINUOUS && j.limits->lower != j.limits->upper) {
          if (j.limits->lower > j.limits->upper) {
            throw ModelError("URDF " + who + ": lower limit " + detail::formatNumber(j.limits->lower) +
                             " is above upper limit " + detail::formatNumber(j.limits->upper));
          }
          js.lower = j.limits->lower;
          js.upper = j.limits->upper;
        }
        // 0 (the URDF default when absent) means "not given".
        if (j.limits->velocity != 0.0) js.velocity_limit = j.limits->velocity;
        if (j.limits->effort != 0.0) js.effort_limit = j.limits->effort;
      }
      // a massless body, a point mass or a thin rod is passed on: buildModel refuses a joint that moves
      // nothing (a singular inertia matrix), naming it
      const Inertia& in = inertia[static_cast<std::size_t>(i)];
      if (const std::string why = checkInertia(in.inertia, true); !why.empty()) {
        throw ModelError("URDF " + who + ": moving link " + quoted(js.link) +
                         " after merging its fixed links: " + why);
      }
      js.mass = in.mass;
      js.com = in.com;
      js.inertia = 0.5 * (in.inertia + in.inertia.transpose());
      if (!options_.armature.empty()) js.armature = options_.armature[static_cast<std::size_t>(i)];
      if (whole_tree_) js.parent = parent[static_cast<std::size_t>(i)];
      spec.joints.push_back(std::move(js));
    }
    if (tree_) {
      spec.root = options_.root;
      spec.root_link = base_->name;
    }
    if (moving_root) {
      if (const std::string why = checkInertia(root.inertia, true); !why.empty()) {
        throw ModelError("URDF base link " + quoted(base_->name) + " after merging its fixed links: " + why);
      }
      spec.root_mass = root.mass;
      spec.root_com = root.com;
      spec.root_inertia = 0.5 * (root.inertia + root.inertia.transpose());
    }
    const Pose tip = in_body.at(tip_->name);
    spec.tip_rotation = tip.R;
    spec.tip_origin = tip.p;
    spec.fixed_frames = std::move(fixed_frames);
    return spec;
  }

  const urdf::ModelInterface& model_;
  const UrdfOptions& options_;
  Ticker ticker_;
  std::unordered_map<const urdf::Link*, LinkPtr> head_;  // rigidHead of every link below the base
  LinkPtr base_, tip_;
  std::set<std::string> visited_;
  std::vector<JointPtr> subtree_joints_;
  const std::vector<std::string>& joint_order_;  // the joints' names in the order of the file
  std::vector<JointPtr> chain_;                  // the model's joints in order (a chain, or the whole tree)
  std::map<std::string, int> chain_index_;
  bool whole_tree_ = false;  // every moving joint below the base (else the chain base -> tip)
  bool tree_ = false;        // the whole tree, or a floating or planar root: root and root_link are set
  std::vector<std::string> notes_;  // for options.notes
};

}  // namespace

ModelSpec specFromUrdf(const std::string& urdf_xml, const UrdfOptions& options, const StopCondition* stop) {
  try {
    std::vector<std::string> joint_order;
    const urdf::ModelInterfaceSharedPtr model =
        parse(urdf_xml, options.xml_limits, options.max_tree_depth, stop, joint_order);
    return Importer(*model, options, stop, joint_order).run();
  } catch (const ModelError&) {
    throw;
  } catch (const Stopped&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw ModelError(std::string("URDF import failed: ") + e.what());
  }
}

Model buildModelFromUrdf(const std::string& urdf_xml, const UrdfOptions& options, const StopCondition* stop) {
  const ModelSpec spec = specFromUrdf(urdf_xml, options, stop);
  try {
    return buildModel(spec, stop);
  } catch (const ModelError& e) {
    throw ModelError("URDF robot " + quoted(spec.name) + ": " + e.what());
  }
}

Model buildModelFromUrdfFile(const std::string& path, const UrdfOptions& options, const StopCondition* stop) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError("URDF file " + quoted(path) + " cannot be opened");
  // a file beyond the text limit is not read at all (and no more than the limit plus one byte otherwise)
  const std::size_t limit = options.xml_limits.max_bytes;
  in.seekg(0, std::ios::end);
  if (const std::streamoff size = in.tellg(); size >= 0 && static_cast<std::uintmax_t>(size) > limit) {
    throw ModelError(path + ": URDF text has " + std::to_string(size) + " bytes, more than the limit of " +
                     std::to_string(limit));
  }
  in.clear();
  in.seekg(0);
  std::string text(limit + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ModelError("URDF file " + quoted(path) + " cannot be read");
  text.resize(static_cast<std::size_t>(in.gcount()));
  try {
    return buildModelFromUrdf(text, options, stop);
  } catch (const ModelError& e) {
    throw ModelError(path + ": " + e.what());
  }
}

}  // namespace denoc
