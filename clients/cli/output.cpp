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
  return v;
}

void writeJointTable(std::ostream& out, const Model& model, const std::vector<Result::Vector>& vectors) {
  writeJointTable(out, view(model), vectors);
}

void writeJointTable(std::ostream& out, const ModelView& model, const std::vector<Result::Vector>& vectors) {
  std::vector<std::vector<std::string>> rows(static_cast<std::size_t>(model.n) + 1);
  rows[0] = {"#", "joint", "type"};
  for (int i = 0; i < model.n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    rows[ui + 1] = {std::to_string(i + 1), model.joint_names[ui], typeName(model.type[ui])};
  }
  const std::size_t index_width = rows.back()[0].size();
  for (auto& r : rows) r[0] = padLeft(r[0], index_width);
  for (const Result::Vector& v : vectors) {
    std::size_t wn = v.title.size();
    std::size_t wu = 0;
    for (int i = 0; i < model.n; ++i) {
      wn = std::max(wn, fmt(v.value[i]).size());
      wu = std::max(wu, unit(v.quantity, model.type[static_cast<std::size_t>(i)]).size());
    }
    rows[0].push_back(padLeft(v.title, wn));
    for (int i = 0; i < model.n; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      rows[ui + 1].push_back(padLeft(fmt(v.value[i]), wn) + " " +
                             padRight(unit(v.quantity, model.type[ui]), wu));
    }
  }
  printGrid(out, rows);
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
        if (results.size() > 1) out << ", state " << k + 1 << " of " << results.size();
        if (!model.model_id.empty()) {
          out << "\nmodel id: " << model.model_id;
          if (model.compute_time_ns >= 0) out << " (server compute time " << model.compute_time_ns << " ns)";
        }
        out << "\ngravity: [" << fmt(model.gravity[0]) << ", " << fmt(model.gravity[1]) << ", "
            << fmt(model.gravity[2]) << "] m/s^2 in the base frame\n\n";
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
      out << ", \"dof\": " << model.n << ",\n \"gravity\": " << toJson(Eigen::VectorXd(model.gravity)).dump()
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
  double total = 0.0;
  int prismatic = 0;
  for (int i = 0; i < model.n; ++i) {
    total += spec.joints[static_cast<std::size_t>(i)].mass;
    prismatic += model.type[static_cast<std::size_t>(i)] == JointType::Prismatic ? 1 : 0;
  }
  switch (format) {
    case Format::Table: {
      out << "model:   '" << spec.name << "' from " << source << '\n';
      out << "joints:  " << model.n << " (" << model.n - prismatic << " revolute, " << prismatic
          << " prismatic), total moving mass " << fmt(total) << " kg\n";
      out << "gravity: [" << fmt(spec.gravity[0]) << ", " << fmt(spec.gravity[1]) << ", "
          << fmt(spec.gravity[2]) << "] m/s^2 in the base frame\n\n";
      std::vector<std::vector<std::string>> rows = {
          {"#", "joint", "link", "type", "mass", "lower", "upper", "max velocity", "max effort", "armature"}};
      for (int i = 0; i < model.n; ++i) {
        const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
        const JointType t = model.type[static_cast<std::size_t>(i)];
        const auto lim = [&](double x, Quantity q) {
          return std::isinf(x) ? std::string("none") : fmt(x) + " " + unit(q, t);
        };
        rows.push_back(
            {std::to_string(i + 1), j.name, j.link, typeName(t), fmt(j.mass) + " kg",
             lim(j.lower, Quantity::Position), lim(j.upper, Quantity::Position),
             lim(j.velocity_limit, Quantity::Velocity), lim(j.effort_limit, Quantity::Force),
             j.armature == 0.0 ? std::string("0") : fmt(j.armature) + " " + unit(Quantity::Inertia, t)});
      }
      printGrid(out, rows);
      break;
    }
    case Format::Json: {
      ojson doc = ojson::object();
      doc["name"] = spec.name;
      doc["source"] = source;
      doc["dof"] = model.n;
      doc["gravity"] = {spec.gravity[0], spec.gravity[1], spec.gravity[2]};
      doc["total_mass"] = total;
      ojson joints = ojson::array();
      for (int i = 0; i < model.n; ++i) {
        const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
        ojson o = ojson::object();
        o["name"] = j.name;
        o["link"] = j.link;
        o["type"] = typeName(model.type[static_cast<std::size_t>(i)]);
        o["mass"] = j.mass;
        o["lower"] = limitJson(j.lower);
        o["upper"] = limitJson(j.upper);
        o["velocity_limit"] = limitJson(j.velocity_limit);
        o["effort_limit"] = limitJson(j.effort_limit);
        o["armature"] = j.armature;
        joints.push_back(o);
      }
      doc["joints"] = joints;
      out << doc.dump(2) << '\n';
      break;
    }
    case Format::Csv: {
      out << "index,joint,link,type,mass,lower,upper,velocity_limit,effort_limit,armature\n";
      for (int i = 0; i < model.n; ++i) {
        const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
        out << i << ',' << j.name << ',' << j.link << ',' << typeName(model.type[static_cast<std::size_t>(i)])
            << ',' << full(j.mass) << ',' << full(j.lower) << ',' << full(j.upper) << ','
            << full(j.velocity_limit) << ',' << full(j.effort_limit) << ',' << full(j.armature) << '\n';
      }
      break;
    }
  }
}

}  // namespace denoc::cli