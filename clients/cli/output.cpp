// Output of the `denoc` tool: results per state, model descriptions, joint tables and matrices.
#include "output.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

namespace denoc::cli {

using ojson = nlohmann::ordered_json;

std::string inertiaUnits(const ModelView& model, bool inverse) {
  const bool prismatic = std::any_of(model.type.begin(), model.type.end(),
                                     [](JointType t) { return t == JointType::Prismatic; });
  const bool revolute =
      std::any_of(model.type.begin(), model.type.end(), [](JointType t) { return t == JointType::Revolute; });
  const std::string rr = inverse ? "1/(kg m^2)" : "kg m^2";
  const std::string rp = inverse ? "1/(kg m)" : "kg m";
  const std::string pp = inverse ? "1/kg" : "kg";
  if (prismatic && revolute) {
    return "units: " + rr + " between revolute joints, " + rp + " between a revolute and a prismatic one, " +
           pp + " between prismatic joints";
  }
  return "units: " + (prismatic ? pp : rr);
}

Result inverseDynamicsResult(const State& state, const Eigen::VectorXd& tau) {
  Result r;
  r.vectors = {{"q", "q", Quantity::Position, state.q},
               {"qd", "qd", Quantity::Velocity, state.qd},
               {"qdd", "qdd", Quantity::Acceleration, state.qdd},
               {"tau", "tau", Quantity::Force, tau}};
  return r;
}

Result forwardDynamicsResult(const State& state, const Eigen::VectorXd& qdd) {
  Result r;
  r.vectors = {{"q", "q", Quantity::Position, state.q},
               {"qd", "qd", Quantity::Velocity, state.qd},
               {"tau", "tau", Quantity::Force, state.tau},
               {"qdd", "qdd", Quantity::Acceleration, qdd}};
  return r;
}

Result factorResult(const ModelView& model, const Eigen::VectorXd& q, const Eigen::VectorXd& D,
                    const Eigen::MatrixXd& I, const Eigen::MatrixXd& U, double log_det) {
  Result r;
  r.vectors = {{"q", "q", Quantity::Position, q}, {"D", "D", Quantity::Inertia, D}};
  r.matrices = {{"I", "I(q): joint-space inertia matrix", inertiaUnits(model, false), I},
                {"U", "U: unit upper triangular factor, I = U D U^T", "", U}};
  r.scalars = {{"log_det", "log det I", log_det}};
  return r;
}

void addInverse(Result& result, const ModelView& model, const Eigen::MatrixXd& inverse) {
  result.matrices.push_back({"I_inv", "I(q)^-1", inertiaUnits(model, true), inverse});
}

ModelView view(const Model& model) {
  ModelView v;
  v.name = model.spec.name;
  v.n = model.n;
  for (const JointSpec& j : model.spec.joints) v.joint_names.push_back(j.name);
  v.type = model.type;
  v.gravity = model.gravity;
  v.nq = model.nq;
  v.nv = model.nv;
  v.root = model.root;
  return v;
}

const char* rootName(RootJoint root) {
  return root == RootJoint::Floating ? "floating" : root == RootJoint::Planar ? "planar" : "fixed";
}

std::vector<std::string> rootQNames(RootJoint root) {
  if (root == RootJoint::Floating) return {"x", "y", "z", "qx", "qy", "qz", "qw"};
  if (root == RootJoint::Planar) return {"x", "y", "yaw"};
  return {};
}

std::vector<std::string> rootVNames(RootJoint root) {
  if (root == RootJoint::Floating) return {"wx", "wy", "wz", "vx", "vy", "vz"};
  if (root == RootJoint::Planar) return {"x", "y", "yaw"};
  return {};
}

namespace {

// One row of a joint table: a root coordinate or a joint. kind: 0 rad-based, 1 m-based, 2 no unit (the
// quaternion).
struct Coordinate {
  std::string joint, type;
  int kind;
};

std::string unitOf(Quantity quantity, int kind) {
  if (kind == 2) return "";
  return unit(quantity, kind == 0 ? JointType::Revolute : JointType::Prismatic);
}

// The rows of q (configuration) or of qd, qdd, tau (velocity): a moving root's coordinates, then the joints.
std::vector<Coordinate> coordinates(const ModelView& model, bool configuration) {
  std::vector<Coordinate> rows;
  const std::vector<std::string> names = configuration ? rootQNames(model.root) : rootVNames(model.root);
  for (std::size_t k = 0; k < names.size(); ++k) {
    int kind = 1;
    if (model.root == RootJoint::Floating) {
      kind = configuration ? (k < 3 ? 1 : 2) : (k < 3 ? 0 : 1);
    } else if (k == 2) {
      kind = 0;  // the planar root's yaw
    }
    rows.push_back({"root_joint " + names[k], rootName(model.root), kind});
  }
  for (int i = 0; i < model.n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    rows.push_back(
        {model.joint_names[ui], typeName(model.type[ui]), model.type[ui] == JointType::Revolute ? 0 : 1});
  }
  return rows;
}

void writeCoordinateTable(std::ostream& out, const std::vector<Coordinate>& coords,
                          const std::vector<const Result::Vector*>& vectors) {
  const std::size_t n = coords.size();
  std::vector<std::vector<std::string>> rows(n + 1);
  rows[0] = {"#", "joint", "type"};
  for (std::size_t i = 0; i < n; ++i) rows[i + 1] = {std::to_string(i + 1), coords[i].joint, coords[i].type};
  const std::size_t index_width = rows.back()[0].size();
  for (auto& r : rows) r[0] = padLeft(r[0], index_width);
  for (const Result::Vector* v : vectors) {
    std::size_t wn = v->title.size();
    std::size_t wu = 0;
    for (std::size_t i = 0; i < n; ++i) {
      wn = std::max(wn, fmt(v->value[static_cast<Eigen::Index>(i)]).size());
      wu = std::max(wu, unitOf(v->quantity, coords[i].kind).size());
    }
    rows[0].push_back(padLeft(v->title, wn));
    for (std::size_t i = 0; i < n; ++i) {
      std::string cell = padLeft(fmt(v->value[static_cast<Eigen::Index>(i)]), wn);
      if (wu > 0) cell += " " + padRight(unitOf(v->quantity, coords[i].kind), wu);
      rows[i + 1].push_back(cell);
    }
  }
  printGrid(out, rows);
}

}  // namespace

void writeJointTable(std::ostream& out, const Model& model, const std::vector<Result::Vector>& vectors) {
  writeJointTable(out, view(model), vectors);
}

void writeJointTable(std::ostream& out, const ModelView& model, const std::vector<Result::Vector>& vectors) {
  std::vector<const Result::Vector*> q_part, v_part;
  for (const Result::Vector& v : vectors) {
    const bool configuration = model.root != RootJoint::Fixed && v.quantity == Quantity::Position;
    (configuration ? q_part : v_part).push_back(&v);
  }
  if (!q_part.empty()) {  // a moving root: q has its own rows (nq), before the velocity-level table (nv)
    writeCoordinateTable(out, coordinates(model, true), q_part);
    if (!v_part.empty()) out << '\n';
  }
  if (!v_part.empty()) writeCoordinateTable(out, coordinates(model, false), v_part);
}

void writeMatrix(std::ostream& out, const Result::Matrix& matrix) {
  out << matrix.title << (matrix.units.empty() ? "" : " (" + matrix.units + ")") << '\n';
  const Eigen::MatrixXd& m = matrix.value;
  std::size_t w = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i) w = std::max(w, fmt(m.data()[i]).size());
  w = std::max(w, std::to_string(m.cols()).size());
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {""};
  for (Eigen::Index j = 0; j < m.cols(); ++j) head.push_back(padLeft(std::to_string(j + 1), w));
  rows.push_back(head);
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    std::vector<std::string> row = {"  " + std::to_string(i + 1)};
    for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(padLeft(fmt(m(i, j)), w));
    rows.push_back(row);
  }
  printGrid(out, rows);
}

void writeResults(std::ostream& out, const Model& model, const std::string& command,
                  const std::vector<Result>& results, Format format) {
  writeResults(out, view(model), command, results, format);
}

void writeResults(std::ostream& out, const ModelView& model, const std::string& command,
                  const std::vector<Result>& results, Format format) {
  switch (format) {
    case Format::Table: {
      for (std::size_t k = 0; k < results.size(); ++k) {
        const Result& r = results[k];
        if (k > 0) out << '\n';
        out << "denoc " << command << ": model '" << model.name << "', " << model.n << " joints";
        if (model.root != RootJoint::Fixed) {
          out << ", " << rootName(model.root) << " root (nq " << model.nq << ", nv " << model.nv << ")";
        }
        if (results.size() > 1) out << ", state " << k + 1 << " of " << results.size();
        if (!model.model_id.empty()) {
          out << "\nmodel id: " << model.model_id;
          if (model.compute_time_ns >= 0) out << " (server compute time " << model.compute_time_ns << " ns)";
        }
        out << "\ngravity: [" << fmt(model.gravity[0]) << ", " << fmt(model.gravity[1]) << ", "
            << fmt(model.gravity[2]) << "] m/s^2 in the "
            << (model.root == RootJoint::Fixed ? "base frame" : "world") << "\n\n";
        writeJointTable(out, model, r.vectors);
        for (const Result::Matrix& m : r.matrices) {
          out << '\n';
          writeMatrix(out, m);
        }
        if (!r.scalars.empty()) out << '\n';
        for (const Result::Scalar& s : r.scalars) out << s.title << " = " << fmt(s.value, 10) << '\n';
      }
      break;
    }
    case Format::Json: {
      // one state per line; numbers in the shortest form that reads back to the same double
      out << "{\"command\": " << ojson(command).dump() << ", \"model\": " << ojson(model.name).dump();
      if (!model.model_id.empty()) {
        out << ", \"model_id\": " << ojson(model.model_id).dump();
        if (model.compute_time_ns >= 0) out << ", \"compute_time_ns\": " << model.compute_time_ns;
      }
      const int nq = model.nq > 0 ? model.nq : model.n, nv = model.nv > 0 ? model.nv : model.n;
      out << ", \"dof\": " << nv << ", \"nq\": " << nq << ", \"nv\": " << nv << ", \"nu\": " << model.n
          << ", \"root\": \"" << rootName(model.root)
          << "\",\n \"gravity\": " << toJson(Eigen::VectorXd(model.gravity)).dump()
          << ", \"joints\": " << ojson(model.joint_names).dump() << ",\n \"states\": [";
      for (std::size_t k = 0; k < results.size(); ++k) {
        const Result& r = results[k];
        ojson s = ojson::object();
        for (const auto& v : r.vectors) s[v.key] = toJson(v.value);
        for (const auto& m : r.matrices) s[m.key] = toJson(m.value);
        for (const auto& x : r.scalars) s[x.key] = x.value;
        out << (k == 0 ? "\n  " : ",\n  ") << s.dump();
      }
      out << "\n ]}\n";
      break;
    }
    case Format::Csv: {
      if (results.empty()) break;
      const Result& first = results.front();
      std::vector<std::string> header;
      for (const auto& v : first.vectors) {
        for (Eigen::Index i = 0; i < v.value.size(); ++i) header.push_back(v.key + std::to_string(i));
      }
      for (const auto& m : first.matrices) {
        for (Eigen::Index i = 0; i < m.value.rows(); ++i) {
          for (Eigen::Index j = 0; j < m.value.cols(); ++j) {
            header.push_back(m.key + "_" + std::to_string(i) + "_" + std::to_string(j));
          }
        }
      }
      for (const auto& x : first.scalars) header.push_back(x.key);
      for (std::size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << header[c];
      out << '\n';
      for (const Result& r : results) {
        bool firstCell = true;
        const auto cell = [&](double x) {
          out << (firstCell ? "" : ",") << full(x);
          firstCell = false;
        };
        for (const auto& v : r.vectors) {
          for (Eigen::Index i = 0; i < v.value.size(); ++i) cell(v.value[i]);
        }
        for (const auto& m : r.matrices) {
          for (Eigen::Index i = 0; i < m.value.rows(); ++i) {
            for (Eigen::Index j = 0; j < m.value.cols(); ++j) cell(m.value(i, j));
          }
        }
        for (const auto& x : r.scalars) cell(x.value);
        out << '\n';
      }
      break;
    }
  }
}

void writeInfo(std::ostream& out, const Model& model, const std::string& source, Format format) {
  const ModelSpec& spec = model.spec;
  const bool moving = model.root != RootJoint::Fixed;
  double total = moving ? spec.root_mass : 0.0;
  int prismatic = 0;
  for (int i = 0; i < model.n; ++i) {
    total += spec.joints[static_cast<std::size_t>(i)].mass;
    prismatic += model.type[static_cast<std::size_t>(i)] == JointType::Prismatic ? 1 : 0;
  }
  // the tree: joints on the path from the world (the moving root joint counted), each joint's parent
  const int root_depth = moving ? 1 : 0;
  std::vector<int> depth(static_cast<std::size_t>(model.n), 0);
  int max_depth = root_depth;
  for (int i = 0; i < model.n; ++i) {
    const int p = model.parent[static_cast<std::size_t>(i)];
    depth[static_cast<std::size_t>(i)] = (p < 0 ? root_depth : depth[static_cast<std::size_t>(p)]) + 1;
    max_depth = std::max(max_depth, depth[static_cast<std::size_t>(i)]);
  }
  const std::string root_link = spec.root_link.empty() ? std::string("base") : spec.root_link;
  const auto parentName = [&](int i) {
    const int p = model.parent[static_cast<std::size_t>(i)];
    if (p >= 0) return spec.joints[static_cast<std::size_t>(p)].name;
    return moving ? std::string("root_joint") : std::string();
  };
  const auto indexRange = [](int first, int count) {
    return count == 1 ? std::to_string(first)
                      : std::to_string(first) + ".." + std::to_string(first + count - 1);
  };
  switch (format) {
    case Format::Table: {
      out << "model:   '" << spec.name << "' from " << source << '\n';
      out << "root:    " << rootName(model.root) << " (root link '" << root_link << "'";
      if (moving) out << ", " << fmt(spec.root_mass) << " kg, moved by 'root_joint'";
      out << ")\n";
      out << "sizes:   nq " << model.nq << ", nv " << model.nv << ", nu " << model.nu << "; depth "
          << max_depth << " (most joints on a path from the world)\n";
      out << "joints:  " << model.n << " (" << model.n - prismatic << " revolute, " << prismatic
          << " prismatic), total moving mass " << fmt(total) << " kg\n";
      out << "gravity: [" << fmt(spec.gravity[0]) << ", " << fmt(spec.gravity[1]) << ", "
          << fmt(spec.gravity[2]) << "] m/s^2 in the " << (moving ? "world" : "base frame") << "\n\n";
      std::vector<std::vector<std::string>> rows = {{"#", "joint", "link", "type", "q", "v", "parent", "mass",
                                                     "lower", "upper", "max velocity", "max effort",
                                                     "armature"}};
      if (moving) {
        rows.push_back({"0", "root_joint", root_link, rootName(model.root), indexRange(0, model.nqr),
                        indexRange(0, model.nr), "world", fmt(spec.root_mass) + " kg", "", "", "", "", ""});
      }
      for (int i = 0; i < model.n; ++i) {
        const auto ui = static_cast<std::size_t>(i);
        const JointSpec& j = spec.joints[ui];
        const JointType t = model.type[ui];
        const auto lim = [&](double x, Quantity q) {
          return std::isinf(x) ? std::string("none") : fmt(x) + " " + unit(q, t);
        };
        const std::string parent = parentName(i);
        rows.push_back(
            {std::to_string(i + 1), std::string(2 * static_cast<std::size_t>(depth[ui] - 1), ' ') + j.name,
             j.link, typeName(t), std::to_string(model.nqr + i), std::to_string(model.nr + i),
             parent.empty() ? std::string("base") : parent, fmt(j.mass) + " kg",
             lim(j.lower, Quantity::Position), lim(j.upper, Quantity::Position),
             lim(j.velocity_limit, Quantity::Velocity), lim(j.effort_limit, Quantity::Force),
             j.armature == 0.0 ? std::string("0") : fmt(j.armature) + " " + unit(Quantity::Inertia, t)});
      }
      printGrid(out, rows);
      if (!spec.fixed_frames.empty()) {
        out << "\nfixed frames (URDF links merged by fixed joints, named by --wrench):";
        for (const FixedFrameSpec& f : spec.fixed_frames) {
          out << (&f == &spec.fixed_frames.front() ? " " : ", ") << f.name << " on "
              << (f.joint >= 0 ? spec.joints[static_cast<std::size_t>(f.joint)].link : root_link);
        }
        out << '\n';
      }
      break;
    }
    case Format::Json: {
      ojson doc = ojson::object();
      doc["name"] = spec.name;
      doc["source"] = source;
      doc["dof"] = model.nv;
      doc["nq"] = model.nq;
      doc["nv"] = model.nv;
      doc["nu"] = model.nu;
      doc["root"] = rootName(model.root);
      doc["root_link"] = root_link;
      doc["depth"] = max_depth;
      doc["gravity"] = {spec.gravity[0], spec.gravity[1], spec.gravity[2]};
      doc["total_mass"] = total;
      if (moving) {
        ojson r = ojson::object();
        r["name"] = "root_joint";
        r["link"] = root_link;
        r["type"] = rootName(model.root);
        r["parent"] = nullptr;
        r["q_index"] = 0;
        r["v_index"] = 0;
        r["nq"] = model.nqr;
        r["nv"] = model.nr;
        r["depth"] = 1;
        r["mass"] = spec.root_mass;
        doc["root_joint"] = r;
      }
      ojson joints = ojson::array();
      for (int i = 0; i < model.n; ++i) {
        const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
        ojson o = ojson::object();
        o["name"] = j.name;
        o["link"] = j.link;
        o["type"] = typeName(model.type[static_cast<std::size_t>(i)]);
        const std::string parent = parentName(i);
        o["parent"] = parent.empty() ? ojson(nullptr) : ojson(parent);
        o["q_index"] = model.nqr + i;
        o["v_index"] = model.nr + i;
        o["depth"] = depth[static_cast<std::size_t>(i)];
        o["mass"] = j.mass;
        o["lower"] = limitJson(j.lower);
        o["upper"] = limitJson(j.upper);
        o["velocity_limit"] = limitJson(j.velocity_limit);
        o["effort_limit"] = limitJson(j.effort_limit);
        o["armature"] = j.armature;
        joints.push_back(o);
      }
      doc["joints"] = joints;
      ojson fixed = ojson::array();
      for (const FixedFrameSpec& f : spec.fixed_frames) {
        fixed.push_back(
            {{"name", f.name},
             {"fixed_to", f.joint >= 0 ? spec.joints[static_cast<std::size_t>(f.joint)].link : root_link}});
      }
      doc["fixed_frames"] = fixed;
      out << doc.dump(2) << '\n';
      break;
    }
    case Format::Csv: {
      out << "index,joint,link,type,mass,lower,upper,velocity_limit,effort_limit,armature,parent,depth,q_"
             "index,"
             "v_index\n";
      if (moving) {
        out << "-1,root_joint," << root_link << ',' << rootName(model.root) << ',' << full(spec.root_mass)
            << ",,,,,,,1,0,0\n";
      }
      for (int i = 0; i < model.n; ++i) {
        const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
        out << i << ',' << j.name << ',' << j.link << ',' << typeName(model.type[static_cast<std::size_t>(i)])
            << ',' << full(j.mass) << ',' << full(j.lower) << ',' << full(j.upper) << ','
            << full(j.velocity_limit) << ',' << full(j.effort_limit) << ',' << full(j.armature) << ','
            << parentName(i) << ',' << depth[static_cast<std::size_t>(i)] << ',' << model.nqr + i << ','
            << model.nr + i << '\n';
      }
      break;
    }
  }
}

}  // namespace denoc::cli