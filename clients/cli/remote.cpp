// `denoc --server HOST:PORT <command>`: the tool as a client of denocd, through denoc::client.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "commands.hpp"
#include "denoc/client/client.hpp"
#include "denoc/model_io.hpp"
#include "suggest.hpp"

namespace denoc::cli {

namespace {

using ojson = nlohmann::ordered_json;
namespace dc = denoc::client;

/// The bearer token of --token-file: the file's first line without surrounding whitespace.
std::string readToken(const Options& o) {
  if (!o.token.empty()) {
    throw InputError("give either --token (or DENOC_TOKEN) or --token-file, not both");
  }
  std::ifstream in(o.token_file);
  if (!in) throw InputError("--token-file: cannot read " + o.token_file);
  std::string line;
  std::getline(in, line);
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  line.erase(line.begin(), std::find_if_not(line.begin(), line.end(), space));
  line.erase(std::find_if_not(line.rbegin(), line.rend(), space).base(), line.end());
  if (line.empty()) throw InputError("--token-file: " + o.token_file + " has no token on its first line");
  if (std::any_of(line.begin(), line.end(), space)) {
    throw InputError("--token-file: the first line of " + o.token_file +
                     " holds more than one word; expected the token alone (a server's token file has "
                     "NAME TOKEN lines)");
  }
  return line;
}

// A gRPC target as a person types it: HOST:PORT, or a scheme gRPC knows (unix:, dns:, ipv4:, ipv6:). A URL
// or a host without a port is refused here with what to type, not with gRPC's resolver error.
void checkTarget(const std::string& target) {
  for (const char* url : {"http://", "https://", "grpc://"}) {
    if (target.rfind(url, 0) == 0) {
      throw InputError("--server " + target + ": give HOST:PORT (a gRPC target), not a URL: --server " +
                       target.substr(std::string(url).size()) +
                       (std::string(url) == "https://" ? " --tls" : ""));
    }
  }
  for (const char* scheme : {"unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:"}) {
    if (target.rfind(scheme, 0) == 0) return;
  }
  const std::size_t close = target.rfind(']');
  const std::size_t colon = target.rfind(':');
  if (colon == std::string::npos || (close != std::string::npos && colon < close) ||
      colon + 1 == target.size()) {
    throw InputError("--server " + target + " has no port: give HOST:PORT, e.g. --server " +
                     (target.empty() ? std::string("127.0.0.1") : target) + ":50051");
  }
}

dc::Client connect(const Options& o) {
  dc::ClientOptions c;
  checkTarget(o.server);
  c.target = o.server;
  c.load_balancing = o.lb_policy;
  if (!(o.deadline_s > 0) || !std::isfinite(o.deadline_s))
    throw InputError("--deadline: expected seconds > 0");
  c.deadline = std::chrono::milliseconds(static_cast<long long>(o.deadline_s * 1000.0));
  if (o.tls || !o.tls_ca.empty() || !o.tls_cert.empty() || !o.tls_key.empty() || !o.tls_server_name.empty()) {
    if (o.tls_cert.empty() != o.tls_key.empty()) {
      throw InputError("mutual TLS needs both --tls-cert and --tls-key");
    }
    dc::TlsOptions t;
    t.root_certs = o.tls_ca;
    t.client_cert = o.tls_cert;
    t.client_key = o.tls_key;
    t.server_name = o.tls_server_name;
    c.tls = t;
  }
  c.bearer_token = o.token_file.empty() ? o.token : readToken(o);
  return dc::Client(c);
}

bool isId(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<Eigen::Vector3d> gravityOption(const Options& o) {
  if (o.gravity.empty()) return std::nullopt;
  return Eigen::Vector3d(vectorOption(o.gravity, 3, "--gravity"));
}

dc::RootJoint clientRoot(RootJoint r) {
  return r == RootJoint::Floating ? dc::RootJoint::Floating
         : r == RootJoint::Planar ? dc::RootJoint::Planar
                                  : dc::RootJoint::Fixed;
}

RootJoint coreRoot(dc::RootJoint r) {
  return r == dc::RootJoint::Floating ? RootJoint::Floating
         : r == dc::RootJoint::Planar ? RootJoint::Planar
                                      : RootJoint::Fixed;
}

/// The model a dynamics command names: a model file (registered first), an id, a unique id prefix or a name.
dc::ModelInfo resolve(dc::Client& c, const Options& o) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(o.model, ec)) {
    return c.registerModelFile(o.model, o.base_link, o.tip_link, gravityOption(o), clientRoot(rootOption(o)))
        .model;
  }
  if (isId(o.model)) return c.getModel(o.model);
  std::vector<dc::ModelInfo> hits;
  const std::vector<dc::ModelInfo> models = c.listModels();
  for (const dc::ModelInfo& m : models) {
    if (m.name == o.model || (o.model.size() >= 6 && m.model_id.rfind(o.model, 0) == 0)) hits.push_back(m);
  }
  if (hits.size() == 1) return hits.front();
  if (hits.empty()) {
    // the nearest names, then where the list is
    std::vector<std::string> names;
    for (const dc::ModelInfo& m : models) names.push_back(m.name);
    const std::string hint = didYouMean(o.model, names);
    throw InputError("'" + o.model +
                     "' is not a model file, and the server has no model with that id or name" + hint +
                     "; `denoc list` shows the " + std::to_string(models.size()) + " models on the server");
  }
  std::string ids;
  for (const auto& m : hits) ids += "\n  " + m.model_id + "  " + m.name;
  throw InputError("'" + o.model + "' names several models on the server; give the id:" + ids);
}

JointType jointType(dc::JointType t) {
  return t == dc::JointType::Prismatic ? JointType::Prismatic : JointType::Revolute;
}

ModelView viewOf(const dc::ModelInfo& m, const dc::AnswerInfo& a) {
  ModelView v;
  v.name = m.name;
  v.n = m.nu;
  v.nq = m.nq;
  v.nv = m.nv;
  v.root = coreRoot(m.root);
  v.joint_names = m.joint_names;
  for (dc::JointType t : m.joint_types) v.type.push_back(jointType(t));
  v.gravity = a.gravity;
  v.model_id = a.model_id;
  v.compute_time_ns = a.compute_time.count();
  return v;
}

Eigen::MatrixXd stack(const std::vector<State>& states, Eigen::VectorXd State::*member, int n) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(states.size()), n);
  for (std::size_t k = 0; k < states.size(); ++k)
    m.row(static_cast<Eigen::Index>(k)) = (states[k].*member).transpose();
  return m;
}

const char* typeName(dc::JointType t) {
  if (t == dc::JointType::Floating) return "floating";
  if (t == dc::JointType::Planar) return "planar";
  return cli::typeName(jointType(t));
}

/// The states of the options for a model on a server: q of nq (a moving root upright at the origin when not
/// given), qd, qdd and tau of nv.
std::vector<State> remoteStates(const Options& o, const dc::ModelInfo& m, unsigned fields) {
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(m.nq);
  if (m.root == dc::RootJoint::Floating && m.nq >= 7) q0[6] = 1.0;
  return readStateOptions(o, m.nq, m.nv, fields, q0, coreRoot(m.root));
}

/// The --wrench options as LinkWrench, each the same for every state (the server resolves the names).
std::vector<dc::LinkWrench> remoteWrenches(const Options& o) {
  std::vector<dc::LinkWrench> out;
  for (const std::string& text : o.wrenches) {
    const WrenchOption w = parseWrench(text, "--wrench");
    out.emplace_back(w.link, Eigen::MatrixXd(w.wrench.transpose()),
                     w.local ? dc::Reference::Local : dc::Reference::Base);
  }
  return out;
}

ojson limit(const Eigen::VectorXd& v, int i) { return i < v.size() ? limitJson(v[i]) : ojson(nullptr); }

dc::Route routeOption(const Options& o) {
  return o.route == "cholesky" ? dc::Route::Cholesky
         : o.route == "fixman" ? dc::Route::Fixman
                               : dc::Route::Saha;
}

ojson infoJson(const dc::ModelInfo& m) {
  ojson doc = ojson::object();
  doc["model_id"] = m.model_id;
  doc["name"] = m.name;
  doc["dof"] = m.dof;
  doc["source"] = m.source;
  doc["pinned"] = m.pinned;
  doc["gravity"] = {m.gravity.x(), m.gravity.y(), m.gravity.z()};
  doc["nq"] = m.nq;
  doc["nv"] = m.nv;
  doc["nu"] = m.nu;
  doc["root"] = rootName(coreRoot(m.root));
  doc["depth"] = m.depth;
  // the tree: joints (m.joints, a moving root first) by the joint_names they describe
  const int offset = m.root == dc::RootJoint::Fixed ? 0 : 1;
  const auto treeJoint = [&](int k) -> const dc::Joint* {
    return k >= 0 && static_cast<std::size_t>(k) < m.joints.size() ? &m.joints[static_cast<std::size_t>(k)]
                                                                   : nullptr;
  };
  const auto parentName = [&](const dc::Joint& j) {
    const dc::Joint* p = treeJoint(j.parent);
    return p ? ojson(p->name) : ojson(nullptr);
  };
  if (offset == 1 && !m.joints.empty()) {
    const dc::Joint& r = m.joints.front();
    doc["root_joint"] = {{"name", r.name},    {"link", r.link},       {"type", typeName(r.type)},
                         {"parent", nullptr}, {"q_index", r.q_index}, {"v_index", r.v_index},
                         {"nq", r.nq},        {"nv", r.nv},           {"depth", r.depth}};
  }
  ojson frames = ojson::array();
  for (const dc::Frame& f : m.frames) {
    const dc::Joint* j = treeJoint(f.joint);
    frames.push_back({{"name", f.name},
                      {"joint", j ? ojson(j->name) : ojson(nullptr)},
                      {"fixed_to", f.fixed_to.empty() ? ojson(nullptr) : ojson(f.fixed_to)}});
  }
  doc["frames"] = frames;
  ojson joints = ojson::array();
  for (int i = 0; i < m.nu; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    ojson j = ojson::object();
    j["name"] = ui < m.joint_names.size() ? m.joint_names[ui] : "";
    j["link"] = ui < m.link_names.size() ? m.link_names[ui] : "";
    j["type"] = ui < m.joint_types.size() ? typeName(m.joint_types[ui]) : "";
    j["lower"] = limit(m.lower, i);
    j["upper"] = limit(m.upper, i);
    j["velocity_limit"] = limit(m.velocity_limit, i);
    j["effort_limit"] = limit(m.effort_limit, i);
    j["armature"] = i < m.armature.size() ? m.armature[i] : 0.0;
    if (const dc::Joint* t = treeJoint(i + offset)) {
      j["parent"] = parentName(*t);
      j["q_index"] = t->q_index;
      j["v_index"] = t->v_index;
      j["depth"] = t->depth;
    }
    joints.push_back(j);
  }
  doc["joints"] = joints;
  return doc;
}

// a limit or a value in the info table: "none" when unlimited
std::string num(double x) { return std::isinf(x) ? "none" : fmt(x); }

void writeRemoteInfo(std::ostream& out, const dc::ModelInfo& m, Format format) {
  if (format == Format::Json) {
    out << infoJson(m).dump(2) << '\n';
    return;
  }
  const int offset = m.root == dc::RootJoint::Fixed ? 0 : 1;
  const auto treeJoint = [&](int k) -> const dc::Joint* {
    return k >= 0 && static_cast<std::size_t>(k) < m.joints.size() ? &m.joints[static_cast<std::size_t>(k)]
                                                                   : nullptr;
  };
  const auto range = [](int first, int count) {
    return count <= 1 ? std::to_string(first)
                      : std::to_string(first) + ".." + std::to_string(first + count - 1);
  };
  if (format == Format::Csv) {
    out << "index,joint,link,type,lower,upper,velocity_limit,effort_limit,armature,parent,depth,q_index,v_"
           "index\n";
    if (offset == 1 && !m.joints.empty()) {
      const dc::Joint& r = m.joints.front();
      out << "-1," << r.name << ',' << r.link << ',' << typeName(r.type) << ",,,,,,," << r.depth << ','
          << r.q_index << ',' << r.v_index << '\n';
    }
    for (int i = 0; i < m.nu; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      out << i << ',' << m.joint_names[ui] << ',' << m.link_names[ui] << ',' << typeName(m.joint_types[ui])
          << ',' << full(m.lower[i]) << ',' << full(m.upper[i]) << ',' << full(m.velocity_limit[i]) << ','
          << full(m.effort_limit[i]) << ',' << full(m.armature[i]);
      if (const dc::Joint* t = treeJoint(i + offset)) {
        const dc::Joint* p = treeJoint(t->parent);
        out << ',' << (p ? p->name : std::string()) << ',' << t->depth << ',' << t->q_index << ','
            << t->v_index;
      } else {
        out << ",,,,";
      }
      out << '\n';
    }
    return;
  }
  const std::string root = rootName(coreRoot(m.root));
  out << "model:   '" << m.name << "' (" << m.source << (m.pinned ? ", built in" : "") << ")\n";
  out << "id:      " << m.model_id << '\n';
  out << "root:    " << root << "\n";
  out << "sizes:   nq " << m.nq << ", nv " << m.nv << ", nu " << m.nu << "; depth " << m.depth
      << " (most joints on a path from the root link)\n";
  out << "joints:  " << m.nu << '\n';
  out << "gravity: [" << num(m.gravity.x()) << ", " << num(m.gravity.y()) << ", " << num(m.gravity.z())
      << "] m/s^2 in the " << (offset ? "world" : "base frame") << "\n\n";
  std::vector<std::vector<std::string>> rows = {{"#", "joint", "link", "type", "q", "v", "parent", "lower",
                                                 "upper", "max velocity", "max effort", "armature"}};
  if (offset == 1 && !m.joints.empty()) {
    const dc::Joint& r = m.joints.front();
    rows.push_back({"0", r.name, r.link, typeName(r.type), range(r.q_index, r.nq), range(r.v_index, r.nv),
                    "world", "", "", "", "", ""});
  }
  for (int i = 0; i < m.nu; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const dc::Joint* t = treeJoint(i + offset);
    const dc::Joint* p = t ? treeJoint(t->parent) : nullptr;
    const int depth = t ? t->depth : i + 1;
    rows.push_back(
        {std::to_string(i + 1),
         std::string(2 * static_cast<std::size_t>(std::max(depth - 1, 0)), ' ') + m.joint_names[ui],
         m.link_names[ui], typeName(m.joint_types[ui]), std::to_string(t ? t->q_index : i),
         std::to_string(t ? t->v_index : i), p ? p->name : std::string("base"), num(m.lower[i]),
         num(m.upper[i]), num(m.velocity_limit[i]), num(m.effort_limit[i]), num(m.armature[i])});
  }
  printGrid(out, rows);
  if (!m.frames.empty()) {
    out << "\nframes:  ";
    for (std::size_t k = 0; k < m.frames.size(); ++k) {
      out << (k ? ", " : "") << m.frames[k].name;
      if (!m.frames[k].fixed_to.empty()) out << " (on " << m.frames[k].fixed_to << ")";
    }
    out << '\n';
  }
}

int simulateRemote(dc::Client& c, const Options& o, const dc::ModelInfo& m) {
  const int n = m.nu;  // torques and damping of the actuated joints; q0 of nq, qd0 of nv
  dc::SimulateOptions s;
  s.t_end = o.t_end;
  s.dt_out = o.dt_out;
  s.integrator = o.integrator == "rk4" ? dc::Integrator::RK4 : dc::Integrator::Dopri5;
  s.route = routeOption(o);
  s.step = o.step;
  s.rtol = o.rtol;
  s.atol = o.atol;
  s.batch_size = o.batch_size;
  if (!o.tau_schedule.empty())
    throw InputError("--tau-schedule is for local runs (give --tau for a constant torque)");
  if (!o.tau.empty()) s.torque = vectorOption(o.tau, n, "--tau").transpose();
  if (!o.damping.empty()) s.damping = vectorOption(o.damping, n, "--damping");
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(m.nq);
  if (m.root == dc::RootJoint::Floating && m.nq >= 7) q0[6] = 1.0;
  if (!o.q0.empty()) q0 = vectorOption(o.q0, m.nq, "--q0", m.nq == n ? "one per joint" : "nq");
  const Eigen::VectorXd qd0 = vectorOption(o.qd0, m.nv, "--qd0", m.nv == n ? "one per joint" : "nv");
  std::ostream& out = std::cout;
  // the header with the first samples: a run the server refuses writes nothing to the CSV
  bool header = false;
  std::optional<Progress> progress(std::in_place, "simulate on " + o.server, s.t_end, o.progress);
  const dc::SimulationSummary sum = c.simulate(m.model_id, q0, qd0, s, [&](const dc::SimulationBatch& b) {
    if (!header) {
      writeSampleHeader(out, m.nq, m.nv);
      header = true;
    }
    for (Eigen::Index k = 0; k < b.t.size(); ++k) {
      const Eigen::VectorXd q = b.q.row(k).transpose(), qd = b.qd.row(k).transpose();
      writeSample(out, b.t[k], q.data(), qd.data(), m.nq, m.nv, b.energy[k]);
    }
    if (b.t.size() > 0) progress->update(b.t[b.t.size() - 1]);
    return static_cast<bool>(out);
  });
  progress.reset();  // the progress line cleared before the summary is printed on its own line
  if (::isatty(STDERR_FILENO) == 1) {
    std::fprintf(stderr,
                 "%zu samples in %zu batches, %llu steps (%llu rejected), server compute time %.3f ms\n",
                 sum.samples, sum.batches, static_cast<unsigned long long>(sum.steps),
                 static_cast<unsigned long long>(sum.rejected_steps), sum.compute_time.count() / 1e6);
  }
  return 0;
}

// denoc --server ... bench MODEL: timed calls of one computation with random states, one batch per call
int benchRemote(dc::Client& c, const Options& o, const dc::ModelInfo& m, Format format) {
  if (o.bench_calls < 1) throw InputError("--calls: expected at least 1");
  if (o.bench_batch < 1) throw InputError("--batch: expected at least 1 state per call");
  const bool fd = o.bench_computation == "fd";
  const int n = m.dof;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto random = [&](int cols) {
    Eigen::MatrixXd a(o.bench_batch, cols);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = u(rng);
    return a;
  };
  Eigen::MatrixXd Q = random(m.nq);
  if (m.root == dc::RootJoint::Floating) {  // unit quaternions
    for (Eigen::Index k = 0; k < Q.rows(); ++k) Q.row(k).segment(3, 4).normalize();
  }
  const Eigen::MatrixXd Qd = random(n), X = random(n);
  const auto call = [&]() -> std::chrono::nanoseconds {
    return fd ? c.forwardDynamics(m.model_id, Q, Qd, X).compute_time
              : c.inverseDynamics(m.model_id, Q, Qd, X).compute_time;
  };
  call();  // warm up: connection and the server's workspaces
  std::vector<double> seconds;
  seconds.reserve(static_cast<std::size_t>(o.bench_calls));
  double compute_s = 0.0;
  Progress progress("bench on " + o.server, o.bench_calls, o.progress);
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < o.bench_calls; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    compute_s += std::chrono::duration<double>(call()).count();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    progress.update(k + 1);
  }
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const auto at = [&](double p) {
    return sorted[static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1))];
  };
  const double states = static_cast<double>(o.bench_calls) * o.bench_batch;
  ojson doc = ojson::object();
  doc["model_id"] = m.model_id;
  doc["computation"] = fd ? "fd" : "id";
  doc["calls"] = o.bench_calls;
  doc["states_per_call"] = o.bench_batch;
  doc["p50_us"] = at(0.5) * 1e6;
  doc["p99_us"] = at(0.99) * 1e6;
  doc["max_us"] = sorted.back() * 1e6;
  doc["states_per_s"] = states / total_s;
  doc["server_compute_us_per_state"] = compute_s * 1e6 / states;
  std::ostream& out = std::cout;
  if (format == Format::Json) {
    out << doc.dump(2) << '\n';
  } else if (format == Format::Csv) {
    out << "computation,calls,states_per_call,p50_us,p99_us,max_us,states_per_s,server_compute_us_per_state\n"
        << doc["computation"].get<std::string>() << ',' << o.bench_calls << ',' << o.bench_batch << ','
        << doc["p50_us"].get<double>() << ',' << doc["p99_us"].get<double>() << ','
        << doc["max_us"].get<double>() << ',' << doc["states_per_s"].get<double>() << ','
        << doc["server_compute_us_per_state"].get<double>() << '\n';
  } else {
    char line[256];
    std::snprintf(line, sizeof line, "%s on %s (%s, %d dof): %d calls of %d state%s\n",
                  fd ? "forward dynamics" : "inverse dynamics", o.server.c_str(), m.name.c_str(), n,
                  o.bench_calls, o.bench_batch, o.bench_batch == 1 ? "" : "s");
    out << line;
    std::snprintf(line, sizeof line, "  latency per call  p50 %.1f us  p99 %.1f us  max %.1f us\n",
                  at(0.5) * 1e6, at(0.99) * 1e6, sorted.back() * 1e6);
    out << line;
    std::snprintf(line, sizeof line, "  throughput        %.0f states/s (server compute %.3f us per state)\n",
                  states / total_s, compute_s * 1e6 / states);
    out << line;
  }
  return 0;
}

// a matrix as text: one row per line (table) or the rows of a CSV block after a label
void writeMatrix(std::ostream& out, const std::string& label, const Eigen::MatrixXd& m, Format format) {
  out << label << (format == Format::Csv ? "\n" : ":\n");
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      out << (j ? (format == Format::Csv ? "," : "  ") : (format == Format::Csv ? "" : "  "))
          << full(m(i, j));
    }
    out << '\n';
  }
}

// denoc --server ... fk | jacobian | derivatives | rollout MODEL ...
int planningRemote(dc::Client& c, const Options& o, const dc::ModelInfo& m, const std::string& command,
                   Format format) {
  const int n = m.nv, nq = m.nq, nu = m.nu;
  std::ostream& out = std::cout;
  ojson doc = ojson::object();
  doc["model_id"] = m.model_id;
  if (command == "rollout") {
    if (o.linearize && format != Format::Json) {
      throw InputError("rollout --linearize: A and B are written in JSON only; add --format json");
    }
    dc::RolloutOptions r;
    r.steps = o.steps;
    r.dt = o.dt;
    r.scheme = o.scheme == "euler" ? dc::StepScheme::SemiImplicitEuler : dc::StepScheme::RK4;
    r.linearize = o.linearize;
    r.wrenches = remoteWrenches(o);  // held over the rollout
    Eigen::VectorXd q0 = Eigen::VectorXd::Zero(nq);
    if (m.root == dc::RootJoint::Floating && nq >= 7) q0[6] = 1.0;  // upright at the origin
    if (!o.q0.empty()) q0 = vectorOption(o.q0, nq, "--q0", nq == nu ? "one per joint" : "nq");
    Eigen::MatrixXd x0(1, nq + n);
    x0 << q0.transpose(), vectorOption(o.qd0, n, "--qd0", n == nu ? "one per joint" : "nv").transpose();
    const Eigen::RowVectorXd tau =
        vectorOption(o.tau, nu, "--tau", nu == n ? "one per joint" : "nu: the actuated joints").transpose();
    const Eigen::MatrixXd U = tau.replicate(static_cast<Eigen::Index>(o.steps), 1);
    const dc::RolloutResult res = c.rollout(m.model_id, x0, {U}, r);
    const Eigen::MatrixXd& states = res.states.at(0);
    if (format == Format::Json) {
      doc["dt"] = o.dt;
      doc["states"] = toJson(states);
      if (o.linearize) {
        ojson a = ojson::array(), b = ojson::array();
        for (const auto& x : res.A.at(0)) a.push_back(toJson(x));
        for (const auto& x : res.B.at(0)) b.push_back(toJson(x));
        doc["A"] = a;
        doc["B"] = b;
      }
      out << doc.dump(2) << '\n';
      return 0;
    }
    out << "step";
    for (int j = 0; j < nq; ++j) out << ",q" << j;
    for (int j = 0; j < n; ++j) out << ",qd" << j;
    out << '\n';
    for (Eigen::Index t = 0; t < states.rows(); ++t) {
      out << t;
      for (Eigen::Index j = 0; j < states.cols(); ++j) out << ',' << full(states(t, j));
      out << '\n';
    }
    return 0;
  }
  const unsigned fields = command == "derivatives" ? (o.of == "fd" ? kQ | kQd | kTau : kQ | kQd | kQdd) : kQ;
  const std::vector<State> states = remoteStates(o, m, fields);
  const Eigen::MatrixXd Q = stack(states, &State::q, nq);
  ojson list = ojson::array();
  std::vector<std::vector<std::pair<std::string, Eigen::MatrixXd>>> blocks(states.size());
  if (command == "fk" || command == "jacobian") {
    dc::KinematicsOptions k;
    k.link = o.link;
    if (o.links.size() == 1) k.link = o.links.front();
    if (o.links.size() > 1) k.links = o.links;
    if (!o.point.empty()) k.point = vectorOption(o.point, 3, "--point");
    k.reference = o.local ? dc::Reference::Local : dc::Reference::Base;
    k.jacobian = command == "jacobian";
    k.center_of_mass = o.com && command == "fk";
    k.com_jacobian = k.centroidal = o.com && command == "jacobian";
    const dc::KinematicsResult res = c.kinematics(m.model_id, Q, k);
    const std::size_t L = static_cast<std::size_t>(res.frames);
    for (std::size_t s = 0; s < states.size(); ++s) {
      for (std::size_t l = 0; l < L; ++l) {
        // several frames: keys suffixed by the frame's name ("origin FL_FOOT")
        const std::string suffix = k.links.empty() ? std::string() : " " + k.links[l];
        const std::size_t b = s * L + l;
        blocks[s].emplace_back("rotation" + suffix, res.rotation[b]);
        blocks[s].emplace_back("origin" + suffix, res.origin.row(static_cast<Eigen::Index>(b)));
        if (k.jacobian) blocks[s].emplace_back("jacobian" + suffix, res.jacobian[b]);
      }
      if (k.center_of_mass) {
        blocks[s].emplace_back("com", res.com.row(static_cast<Eigen::Index>(s)));
        blocks[s].emplace_back("mass",
                               Eigen::MatrixXd::Constant(1, 1, res.mass[static_cast<Eigen::Index>(s)]));
      }
      if (k.com_jacobian) blocks[s].emplace_back("com_jacobian", res.com_jacobian[s]);
      if (k.centroidal) blocks[s].emplace_back("centroidal", res.centroidal[s]);
    }
  } else {
    const Eigen::MatrixXd Qd = stack(states, &State::qd, n);  // nv columns, as tau and qdd
    if (o.of == "fd") {
      const auto res = c.forwardDynamicsDerivatives(m.model_id, Q, Qd, stack(states, &State::tau, n),
                                                    std::nullopt, Eigen::MatrixXd(), remoteWrenches(o));
      for (std::size_t s = 0; s < states.size(); ++s) {
        blocks[s] = {{"dqdd_dq", res.dqdd_dq[s]},
                     {"dqdd_dqd", res.dqdd_dqd[s]},
                     {"dqdd_dtau", res.dqdd_dtau[s]},
                     {"qdd", res.qdd.row(static_cast<Eigen::Index>(s))}};
      }
    } else {
      const auto res = c.inverseDynamicsDerivatives(m.model_id, Q, Qd, stack(states, &State::qdd, n),
                                                    std::nullopt, Eigen::MatrixXd(), remoteWrenches(o));
      for (std::size_t s = 0; s < states.size(); ++s) {
        blocks[s] = {{"dtau_dq", res.dtau_dq[s]},
                     {"dtau_dqd", res.dtau_dqd[s]},
                     {"tau", res.tau.row(static_cast<Eigen::Index>(s))}};
      }
    }
  }
  for (std::size_t s = 0; s < states.size(); ++s) {
    if (format == Format::Json) {
      ojson state = ojson::object();
      for (const auto& [name, mat] : blocks[s]) {
        if (name == "mass") {
          state[name] = mat(0, 0);
        } else {
          state[name] = mat.rows() == 1 ? toJson(mat)[0] : toJson(mat);
        }
      }
      list.push_back(state);
    } else {
      if (states.size() > 1) out << (format == Format::Csv ? "# state " : "state ") << s << '\n';
      for (const auto& [name, mat] : blocks[s]) writeMatrix(out, name, mat, format);
    }
  }
  if (format == Format::Json) {
    doc["states"] = list;
    out << doc.dump(2) << '\n';
  }
  return 0;
}

}  // namespace

int runRemote(const Options& o, const std::string& command) {
  const Format format = parseFormat(o.format);
  dc::Client c = connect(o);
  std::ostream& out = std::cout;
  if (command == "list") {
    const auto models = c.listModels();
    if (format == Format::Json) {
      ojson a = ojson::array();
      for (const auto& m : models) a.push_back(infoJson(m));
      out << a.dump(2) << '\n';
    } else if (format == Format::Csv) {
      out << "model_id,name,dof,source,pinned\n";
      for (const auto& m : models) {
        out << m.model_id << ',' << m.name << ',' << m.dof << ',' << m.source << ',' << (m.pinned ? 1 : 0)
            << '\n';
      }
    } else {
      out << models.size() << " model" << (models.size() == 1 ? "" : "s") << " on " << o.server << "\n";
      for (const auto& m : models) {
        out << m.model_id << "  " << m.dof << " dof  " << m.source << (m.pinned ? " (built in)" : "") << "  "
            << m.name << '\n';
      }
    }
    return 0;
  }
  if (command == "info") {
    const dc::ServerInfo s = c.serverInfo();
    if (format == Format::Json) {
      ojson doc = ojson::object();
      doc["server"] = o.server;
      doc["version"] = s.version;
      doc["proto_package"] = s.proto_package;
      doc["max_dof"] = s.max_dof;
      doc["max_states"] = s.max_states;
      doc["max_receive_message_bytes"] = s.max_receive_message_bytes;
      doc["max_send_message_bytes"] = s.max_send_message_bytes;
      doc["max_streams"] = s.max_streams;
      doc["tokens_required"] = s.tokens_required;
      doc["max_depth"] = s.max_depth;
      doc["max_wrenches"] = s.max_wrenches;
      doc["max_frames"] = s.max_frames;
      out << doc.dump(2) << '\n';
    } else if (format == Format::Csv) {
      out << "version,proto_package,max_dof,max_states,max_receive_message_bytes,max_send_message_bytes,"
             "max_streams,tokens_required,max_depth,max_wrenches,max_frames\n"
          << s.version << ',' << s.proto_package << ',' << s.max_dof << ',' << s.max_states << ','
          << s.max_receive_message_bytes << ',' << s.max_send_message_bytes << ',' << s.max_streams << ','
          << (s.tokens_required ? 1 : 0) << ',' << s.max_depth << ',' << s.max_wrenches << ',' << s.max_frames
          << '\n';
    } else {
      out << "server:         " << o.server << '\n'
          << "version:        denocd " << s.version << " (" << s.proto_package << ")\n"
          << "max dof:        " << s.max_dof << '\n'
          << "max states:     " << s.max_states << " per call\n"
          << "max message:    " << s.max_receive_message_bytes << " bytes in, " << s.max_send_message_bytes
          << " bytes out\n"
          << "max streams:    " << s.max_streams << '\n'
          << "tokens:         " << (s.tokens_required ? "required" : "not required") << '\n'
          << "max depth:      " << s.max_depth << " joints on a path from a model's root\n"
          << "max wrenches:   " << s.max_wrenches << " per call\n"
          << "max frames:     " << s.max_frames << " per kinematics call\n";
    }
    return 0;
  }
  if (command == "register") {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.model, ec)) throw InputError(o.model + ": no such file");
    dc::Registration r;
    if (!o.name.empty()) {
      // a display name: build the request from the file, then name it
      dc::Client& cc = c;
      std::string ext = std::filesystem::path(o.model).extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (ext == ".urdf") {
        r = cc.registerUrdf(readText(o.model), o.base_link, o.tip_link, gravityOption(o), o.name, {},
                            clientRoot(rootOption(o)));
      } else {
        if (rootOption(o) != RootJoint::Fixed) {
          throw InputError("--root: a floating or planar root is for URDF files only (" + o.model + ")");
        }
        DHSpec dh = loadDHJsonFile(o.model);
        dh.name = o.name;
        if (const auto g = gravityOption(o)) dh.gravity = *g;
        r = cc.registerDH(dh);
      }
    } else {
      r = c.registerModelFile(o.model, o.base_link, o.tip_link, gravityOption(o), clientRoot(rootOption(o)));
    }
    if (!o.name.empty() && !r.created && r.model.name != o.name) {
      // the display name is the first registration's (the proto's rule): say so rather than drop --name
      std::fprintf(stderr,
                   "denoc register: note: this model was registered before as '%s', the name it keeps; "
                   "--name %s is not applied\n",
                   r.model.name.c_str(), o.name.c_str());
    }
    if (o.quiet) {
      out << r.model_id << '\n';
    } else if (format == Format::Json) {
      ojson doc = ojson::object();
      doc["model_id"] = r.model_id;
      doc["created"] = r.created;
      doc["compute_time_ns"] = r.compute_time.count();
      doc["model"] = infoJson(r.model);
      out << doc.dump(2) << '\n';
    } else if (format == Format::Csv) {
      out << "model_id,name,dof,created\n"
          << r.model_id << ',' << r.model.name << ',' << r.model.dof << ',' << (r.created ? 1 : 0) << '\n';
    } else {
      out << "registered " << o.model << " as " << r.model_id
          << (r.created ? " (new)" : " (already registered)") << "\n\n";
      writeRemoteInfo(out, r.model, format);
    }
    return 0;
  }
  const dc::ModelInfo m = resolve(c, o);
  if (command == "get") {
    writeRemoteInfo(out, m, format);
    return 0;
  }
  if (command == "delete") {
    c.deleteModel(m.model_id);
    if (format == Format::Json) {
      out << ojson({{"deleted", m.model_id}}).dump() << '\n';
    } else {
      out << "deleted " << m.model_id << '\n';
    }
    return 0;
  }
  if (command == "simulate") return simulateRemote(c, o, m);
  if (command == "fk" || command == "jacobian" || command == "derivatives" || command == "rollout")
    return planningRemote(c, o, m, command, format);
  if (command == "bench") return benchRemote(c, o, m, format);

  const int n = m.nv, nq = m.nq;
  std::vector<Result> results;
  const std::vector<dc::LinkWrench> wrenches = remoteWrenches(o);
  if (command == "id") {
    const std::vector<State> states = remoteStates(o, m, kQ | kQd | kQdd);
    const auto a = c.inverseDynamics(m.model_id, stack(states, &State::q, nq), stack(states, &State::qd, n),
                                     stack(states, &State::qdd, n), wrenches);
    for (std::size_t k = 0; k < states.size(); ++k)
      results.push_back(
          inverseDynamicsResult(states[k], a.tau.row(static_cast<Eigen::Index>(k)).transpose()));
    writeResults(out, viewOf(m, a), "id", results, format);
  } else if (command == "fd") {
    const std::vector<State> states = remoteStates(o, m, kQ | kQd | kTau);
    const auto a = c.forwardDynamics(m.model_id, stack(states, &State::q, nq), stack(states, &State::qd, n),
                                     stack(states, &State::tau, n), wrenches, routeOption(o));
    for (std::size_t k = 0; k < states.size(); ++k)
      results.push_back(
          forwardDynamicsResult(states[k], a.qdd.row(static_cast<Eigen::Index>(k)).transpose()));
    writeResults(out, viewOf(m, a), "fd", results, format);
  } else if (command == "factor") {
    const std::vector<State> states = remoteStates(o, m, kQ);
    dc::FactorFlags flags;
    flags.inverse = o.inverse;
    const auto a = c.fullFactor(m.model_id, stack(states, &State::q, nq), flags);
    const ModelView v = viewOf(m, a);
    for (std::size_t k = 0; k < states.size(); ++k) {
      const auto ki = static_cast<Eigen::Index>(k);
      Result r = factorResult(v, states[k].q, a.d.row(ki).transpose(), a.inertia[k], a.u[k], a.log_det[ki]);
      if (o.inverse) addInverse(r, v, a.inverse[k]);
      results.push_back(std::move(r));
    }
    writeResults(out, v, "factor", results, format);
  } else {
    throw InputError("'" + command + "' is not a remote command");
  }
  return 0;
}

}  // namespace denoc::cli
