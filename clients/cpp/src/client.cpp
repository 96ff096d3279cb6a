// denoc::client::Client: the channel and its credentials, the retry and re-registration policy, the models
// (register, get, list, find, delete), the server's limits and the split of batches above them, and the
// dynamics batches (inverse and forward dynamics, the full factor). Simulate is in simulate.cpp, the
// Stream session in stream.cpp, the planning calls in planning.cpp.
#include "denoc/client/client.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "convert_internal.hpp"
#include "denoc/model_io.hpp"
#include "retry.hpp"
#include "split.hpp"

namespace denoc::client {

namespace {

// A file's bytes (TLS material, model files); a missing file is NOT_FOUND, an unreadable one
// INVALID_ARGUMENT, naming what it was for.
std::string readFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw Error(grpc::StatusCode::NOT_FOUND, path + ": no such file (" + what + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(grpc::StatusCode::INVALID_ARGUMENT, path + ": cannot open (" + what + ")");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// --------------------------------------------------------------------------------------- ModelSources

void ModelSources::put(const std::string& id, const v1::RegisterModelRequest& request) {
  std::lock_guard lock(mutex_);
  requests_[id] = request;
}

std::optional<v1::RegisterModelRequest> ModelSources::find(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto it = requests_.find(id);
  if (it == requests_.end()) return std::nullopt;
  return it->second;
}

bool ModelSources::contains(const std::string& id) const {
  std::lock_guard lock(mutex_);
  return requests_.count(id) != 0;
}

std::vector<std::string> ModelSources::ids() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [id, r] : requests_) out.push_back(id);
  return out;
}

std::size_t ModelSources::size() const {
  std::lock_guard lock(mutex_);
  return requests_.size();
}

void ModelSources::erase(const std::string& id) {
  std::lock_guard lock(mutex_);
  requests_.erase(id);
}

// --------------------------------------------------------------------------------------------- Client

Client::Client(ClientOptions options) : options_(std::move(options)) {
  if (options_.retry.max_attempts < 1) options_.retry.max_attempts = 1;
  // the token travels as an HTTP/2 header value: visible ASCII only (RFC 6750 tokens are a subset)
  for (const char c : options_.bearer_token) {
    if (c < 0x21 || c > 0x7e) {
      throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                  "bearer token: only visible ASCII characters are allowed (no spaces, newlines or control "
                  "characters)");
    }
  }
  sources_ = options_.sources ? options_.sources : std::make_shared<ModelSources>();
  options_.sources = sources_;
  retarget(options_.target);
}

Client::Client(const std::string& target)
    : Client([&] {
        ClientOptions o;
        o.target = target;
        return o;
      }()) {}

Client::~Client() = default;

void Client::retarget(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  args.SetMaxSendMessageSize(options_.max_send_message_bytes);
  // reconnect as fast as the retry policy retries, so that a retry after a server (re)start finds it. Not
  // GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: gRPC core takes it as the minimum connect timeout (TCP, TLS handshake
  // and the server's first SETTINGS frame), and a value of 100 ms made TLS connections fail under load.
  const int initial = static_cast<int>(std::max<std::int64_t>(options_.retry.initial_backoff.count(), 10));
  const int max = static_cast<int>(std::max<std::int64_t>(options_.retry.max_backoff.count(), initial));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max);
  // calls spread over a fleet's replicas by default when the target names several (docs/clients.md)
  std::string policy = options_.load_balancing;
  if (policy.empty()) {
    for (const char* scheme : {"dns:", "ipv4:", "ipv6:"}) {
      if (target.rfind(scheme, 0) == 0) policy = "round_robin";
    }
  }
  if (!policy.empty()) args.SetLoadBalancingPolicyName(policy);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options_.tls) {
    const TlsOptions& t = *options_.tls;
    grpc::SslCredentialsOptions ssl;
    if (!t.root_certs.empty()) ssl.pem_root_certs = readFile(t.root_certs, "TLS root certificates");
    if (!t.client_cert.empty() || !t.client_key.empty()) {
      if (t.client_cert.empty() || t.client_key.empty()) {
        throw Error(
            grpc::StatusCode::INVALID_ARGUMENT,
            "mutual TLS needs both a client certificate and its key (TlsOptions::client_cert, client_key)");
      }
      ssl.pem_cert_chain = readFile(t.client_cert, "TLS client certificate");
      ssl.pem_private_key = readFile(t.client_key, "TLS client key");
    }
    if (!t.server_name.empty()) args.SetSslTargetNameOverride(t.server_name);
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  auto channel = grpc::CreateCustomChannel(target, credentials, args);
  auto stub = std::shared_ptr<v1::Dynamics::Stub>(v1::Dynamics::NewStub(channel));
  std::lock_guard lock(mutex_);
  options_.target = target;
  channel_ = std::move(channel);
  stub_ = std::move(stub);
  max_states_.reset();  // another server, perhaps other limits
}

bool Client::waitForConnected(std::chrono::milliseconds timeout) const {
  std::shared_ptr<grpc::Channel> channel;
  {
    std::lock_guard lock(mutex_);
    channel = channel_;
  }
  return channel->WaitForConnected(std::chrono::system_clock::now() + timeout);
}

std::shared_ptr<v1::Dynamics::Stub> Client::stub() const {
  std::lock_guard lock(mutex_);
  return stub_;
}

std::unique_ptr<grpc::ClientContext> Client::context(std::optional<std::chrono::milliseconds> timeout) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (timeout) ctx->set_deadline(std::chrono::system_clock::now() + *timeout);
  if (!options_.bearer_token.empty()) ctx->AddMetadata("authorization", "Bearer " + options_.bearer_token);
  return ctx;
}

void Client::call(
    const char* name, const std::string& model_id, bool retry,
    const std::function<grpc::Status(v1::Dynamics::Stub&, grpc::ClientContext&)>& attempt) const {
  Backoff backoff(options_, name, true);
  bool reregistered = false;
  for (int attempt_no = 1;; ++attempt_no) {
    const auto stub = this->stub();
    const auto ctx = context(options_.deadline);
    const grpc::Status status = attempt(*stub, *ctx);
    if (status.ok()) return;
    const grpc::StatusCode code = status.error_code();
    if (code == grpc::StatusCode::UNAVAILABLE && retry && backoff.more(attempt_no)) {
      backoff.wait(attempt_no, code, status.error_message());
      continue;
    }
    if (code == grpc::StatusCode::NOT_FOUND && !model_id.empty() && !reregistered &&
        reregister(model_id, status.error_message())) {
      reregistered = true;
      --attempt_no;  // the re-registration does not use up an attempt
      continue;
    }
    throw Error(code, status.error_message(), name);
  }
}

bool Client::reregister(const std::string& model_id, const std::string& message) const {
  if (!options_.reregister) return false;
  if (wasDeleted(message)) {
    sources_->erase(model_id);  // deleted on purpose (by any client): not brought back
    return false;
  }
  const auto request = sources_->find(model_id);
  if (!request) return false;
  const Registration r = registerRaw(*request, false);
  if (r.model_id != model_id) {
    throw Error(grpc::StatusCode::FAILED_PRECONDITION,
                "model_id " + model_id + " was not found; registering its source again gave id " +
                    r.model_id + " (the server computes ids differently)",
                "RegisterModel");
  }
  return true;
}

Registration Client::registerRaw(const v1::RegisterModelRequest& request, bool remember) const {
  v1::RegisterModelResponse response;
  call("RegisterModel", {}, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.RegisterModel(&ctx, request, &response);
  });
  Registration r;
  r.model_id = response.model_id();
  r.model = convert::modelInfo(response.model());
  rememberShape(r.model);
  r.created = response.created();
  r.compute_time = std::chrono::nanoseconds(response.compute_time_ns());
  if (remember) sources_->put(r.model_id, request);
  return r;
}

Registration Client::registerModel(const v1::RegisterModelRequest& request) {
  return registerRaw(request, true);
}

Registration Client::registerUrdf(const std::string& urdf_text, const std::string& base_link,
                                  const std::string& tip_link, const std::optional<Eigen::Vector3d>& gravity,
                                  const std::optional<std::string>& name, const std::vector<double>& armature,
                                  RootJoint root) {
  v1::RegisterModelRequest r;
  r.mutable_urdf()->set_text(urdf_text);
  r.mutable_urdf()->set_base_link(base_link);
  r.mutable_urdf()->set_tip_link(tip_link);
  r.mutable_urdf()->set_root(convert::wireRoot(root));
  if (gravity) *r.mutable_gravity() = convert::vec3(*gravity);
  if (name) r.set_name(*name);
  for (double a : armature) r.add_armature(a);
  return registerModel(r);
}

Registration Client::registerDH(const DHSpec& dh) { return registerModel(convert::dhRequest(dh)); }

Registration Client::registerModelFile(const std::string& path, const std::string& base_link,
                                       const std::string& tip_link,
                                       const std::optional<Eigen::Vector3d>& gravity, RootJoint root) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".urdf") {
    return registerUrdf(readFile(path, "URDF model"), base_link, tip_link, gravity, std::nullopt, {}, root);
  }
  if (ext == ".json") {
    if (root != RootJoint::Fixed) {
      throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                  path + ": a floating or planar root is for URDF models, not DH tables", "RegisterModel");
    }
    if (!base_link.empty() || !tip_link.empty()) {
      throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                  path + ": base and tip links are for URDF models, not DH tables", "RegisterModel");
    }
    readFile(path, "DH model");  // a missing file is NOT_FOUND
    DHSpec dh;
    try {
      dh = loadDHJsonFile(path);
    } catch (const std::exception& e) {
      throw Error(grpc::StatusCode::INVALID_ARGUMENT, e.what(), "RegisterModel");
    }
    if (gravity) dh.gravity = *gravity;
    return registerDH(dh);
  }
  throw Error(grpc::StatusCode::INVALID_ARGUMENT,
              path + ": unknown model file extension '" + ext + "' (expected .json or .urdf)",
              "RegisterModel");
}

ModelInfo Client::getModel(const std::string& model_id) {
  v1::GetModelRequest request;
  request.set_model_id(model_id);
  v1::GetModelResponse response;
  call("GetModel", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.GetModel(&ctx, request, &response);
  });
  ModelInfo info = convert::modelInfo(response.model());
  rememberShape(info);
  return info;
}

std::vector<ModelInfo> Client::listModels() {
  std::vector<ModelInfo> out;
  v1::ListModelsRequest request;
  do {
    v1::ListModelsResponse response;
    call("ListModels", {}, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
      response.Clear();
      return stub.ListModels(&ctx, request, &response);
    });
    for (const auto& m : response.models()) {
      out.push_back(convert::modelInfo(m));
      rememberShape(out.back());
    }
    if (!response.next_page_token().empty() && response.next_page_token() <= request.page_token()) {
      throw Error(grpc::StatusCode::INTERNAL, "the server's next_page_token does not advance", "ListModels");
    }
    request.set_page_token(response.next_page_token());
  } while (!request.page_token().empty());
  return out;
}

ModelInfo Client::findModel(const std::string& name) {
  std::vector<ModelInfo> hits;
  for (ModelInfo& m : listModels()) {
    if (m.name == name) hits.push_back(std::move(m));
  }
  if (hits.size() == 1) return hits.front();
  if (hits.empty()) {
    throw Error(grpc::StatusCode::NOT_FOUND, "no model named '" + name + "' on " + options_.target,
                "ListModels");
  }
  std::string ids;
  for (const auto& m : hits) ids += (ids.empty() ? "" : ", ") + m.model_id;
  throw Error(grpc::StatusCode::FAILED_PRECONDITION,
              std::to_string(hits.size()) + " models are named '" + name + "'; give the id: " + ids,
              "ListModels");
}

ServerInfo Client::serverInfo() {
  v1::GetServerInfoResponse response;
  call("GetServerInfo", {}, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.GetServerInfo(&ctx, v1::GetServerInfoRequest(), &response);
  });
  ServerInfo s;
  s.version = response.version();
  s.proto_package = response.proto_package();
  s.max_dof = response.max_dof();
  s.max_states = response.max_states();
  s.max_receive_message_bytes = response.max_receive_message_bytes();
  s.max_send_message_bytes = response.max_send_message_bytes();
  s.max_streams = response.max_streams();
  s.tokens_required = response.tokens_required();
  s.max_depth = response.max_depth();
  s.max_wrenches = response.max_wrenches();
  s.max_frames = response.max_frames();
  return s;
}

std::uint32_t Client::maxStates() {
  {
    std::lock_guard lock(mutex_);
    if (max_states_) return *max_states_;
  }
  std::uint32_t limit = 0;
  try {
    limit = serverInfo().max_states;
  } catch (const Error& e) {
    if (e.code() != grpc::StatusCode::UNIMPLEMENTED) throw;  // a server without GetServerInfo: no split
  }
  std::lock_guard lock(mutex_);
  max_states_ = limit;
  return limit;
}

std::optional<std::uint32_t> Client::cachedMaxStates() const {
  std::lock_guard lock(mutex_);
  return max_states_;
}

bool Client::limitsShrank(const Error& refusal, std::optional<std::uint32_t> before) {
  if (!namesCachedLimit(refusal)) return false;
  {
    std::lock_guard lock(mutex_);
    if (!before) before = max_states_;
    max_states_.reset();
  }
  if (!before) return false;  // the batch was not split by a kept limit (one item): nothing to split anew
  std::uint32_t now = 0;
  try {
    now = maxStates();
  } catch (const Error&) {
    return false;  // the server's refusal says more than this failure
  }
  return now != 0 && (*before == 0 || now < *before);
}

void Client::rememberShape(const ModelInfo& info) const {
  if (info.model_id.empty()) return;
  std::lock_guard lock(mutex_);
  q_extra_[info.model_id] = info.nq - info.nv;
}

int Client::dofOf(const std::string& model_id, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& Qd) {
  {
    std::lock_guard lock(mutex_);
    const auto it = q_extra_.find(model_id);
    if (it != q_extra_.end()) return static_cast<int>(Q.cols()) - it->second;
  }
  if (Qd.size() != 0) return static_cast<int>(Qd.cols());
  const ModelInfo info = getModel(model_id);  // remembers it
  return static_cast<int>(Q.cols()) - (info.nq - info.nv);
}

std::vector<std::pair<Eigen::Index, Eigen::Index>> Client::chunks(Eigen::Index rows,
                                                                  std::uint64_t states_per_row) {
  const std::uint64_t max = rows > 1 ? maxStates() : 0;
  const auto limit = static_cast<Eigen::Index>(states_per_row == 0 ? 0 : max / states_per_row);
  if (limit == 0 || rows <= limit) return {{0, rows}};
  std::vector<std::pair<Eigen::Index, Eigen::Index>> out;
  for (Eigen::Index first = 0; first < rows; first += limit)
    out.emplace_back(first, std::min(limit, rows - first));
  return out;
}

void Client::deleteModel(const std::string& model_id) {
  v1::DeleteModelRequest request;
  request.set_model_id(model_id);
  v1::DeleteModelResponse response;
  call("DeleteModel", {}, false, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    return stub.DeleteModel(&ctx, request, &response);
  });
  sources_->erase(model_id);
}

InverseDynamicsResult Client::idBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                      const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                      const Eigen::MatrixXd& tip_wrench,
                                      const std::vector<LinkWrench>& wrenches,
                                      const std::optional<Payload>& payload) {
  return resplit([&] { return idSplit(model_id, Q, Qd, Qdd, tip_wrench, wrenches, payload); });
}

InverseDynamicsResult Client::idSplit(const std::string& model_id, const Eigen::MatrixXd& Q,
                                      const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                      const Eigen::MatrixXd& tip_wrench,
                                      const std::vector<LinkWrench>& wrenches,
                                      const std::optional<Payload>& payload) {
  const auto parts = Qd.rows() == Q.rows() && Qdd.rows() == Q.rows() &&
                             (tip_wrench.size() == 0 || tip_wrench.rows() == Q.rows()) &&
                             split::wrenchesFit(wrenches, Q.rows())
                         ? chunks(Q.rows())
                         : decltype(chunks(0)){{0, Q.rows()}};  // a shape the server refuses: as it is
  if (parts.size() > 1) {
    InverseDynamicsResult r;
    std::vector<Eigen::MatrixXd> tau;
    for (const auto& [first, size] : parts) {
      InverseDynamicsResult p = idSplit(model_id, Q.middleRows(first, size), Qd.middleRows(first, size),
                                        Qdd.middleRows(first, size), split::rowsOf(tip_wrench, first, size),
                                        split::wrenchesOf(wrenches, Q.rows(), first, size), payload);
      split::joinInfo(r, p, tau.empty());
      tau.push_back(std::move(p.tau));
    }
    r.tau = split::stackRows(tau);
    return r;
  }
  v1::InverseDynamicsRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(dofOf(model_id, Q, Qd)));
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  convert::append(request.mutable_qdd(), Qdd);
  convert::append(request.mutable_tip_wrench(), tip_wrench);
  convert::appendWrenches(request.mutable_wrenches(), wrenches);
  if (payload) convert::writePayload(request.mutable_payload(), *payload);
  v1::InverseDynamicsResponse response;
  call("InverseDynamics", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.InverseDynamics(&ctx, request, &response);
  });
  InverseDynamicsResult r;
  convert::fillInfo(r, response);
  const int count = static_cast<int>(response.count()), dof = static_cast<int>(response.dof());
  convert::expectSize(response.tau_size(), static_cast<std::int64_t>(count) * dof, "tau", "InverseDynamics");
  r.tau = convert::rows(response.tau().data(), count, dof);
  return r;
}

ForwardDynamicsResult Client::fdBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                      const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau, Route route_,
                                      const std::vector<LinkWrench>& wrenches,
                                      const std::optional<Payload>& payload) {
  return resplit([&] { return fdSplit(model_id, Q, Qd, Tau, route_, wrenches, payload); });
}

ForwardDynamicsResult Client::fdSplit(const std::string& model_id, const Eigen::MatrixXd& Q,
                                      const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau, Route route_,
                                      const std::vector<LinkWrench>& wrenches,
                                      const std::optional<Payload>& payload) {
  const auto parts = Qd.rows() == Q.rows() && Tau.rows() == Q.rows() && split::wrenchesFit(wrenches, Q.rows())
                         ? chunks(Q.rows())
                         : decltype(chunks(0)){{0, Q.rows()}};
  if (parts.size() > 1) {
    ForwardDynamicsResult r;
    std::vector<Eigen::MatrixXd> qdd;
    for (const auto& [first, size] : parts) {
      ForwardDynamicsResult p = fdSplit(model_id, Q.middleRows(first, size), Qd.middleRows(first, size),
                                        Tau.middleRows(first, size), route_,
                                        split::wrenchesOf(wrenches, Q.rows(), first, size), payload);
      split::joinInfo(r, p, qdd.empty());
      r.route = p.route;
      qdd.push_back(std::move(p.qdd));
    }
    r.qdd = split::stackRows(qdd);
    return r;
  }
  v1::ForwardDynamicsRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(dofOf(model_id, Q, Qd)));
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  convert::append(request.mutable_tau(), Tau);
  convert::appendWrenches(request.mutable_wrenches(), wrenches);
  request.set_route(convert::wireRoute(route_));
  if (payload) convert::writePayload(request.mutable_payload(), *payload);
  v1::ForwardDynamicsResponse response;
  call("ForwardDynamics", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.ForwardDynamics(&ctx, request, &response);
  });
  ForwardDynamicsResult r;
  convert::fillInfo(r, response);
  const int count = static_cast<int>(response.count()), dof = static_cast<int>(response.dof());
  convert::expectSize(response.qdd_size(), static_cast<std::int64_t>(count) * dof, "qdd", "ForwardDynamics");
  r.qdd = convert::rows(response.qdd().data(), count, dof);
  r.route = convert::route(response.route());
  return r;
}

FullFactorResult Client::factorBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                     const FactorFlags& flags, const Eigen::MatrixXd& Qd,
                                     const std::optional<Payload>& payload) {
  return resplit([&] { return factorSplit(model_id, Q, flags, Qd, payload); });
}

FullFactorResult Client::factorSplit(const std::string& model_id, const Eigen::MatrixXd& Q,
                                     const FactorFlags& flags, const Eigen::MatrixXd& Qd,
                                     const std::optional<Payload>& payload) {
  const auto parts =
      Qd.size() == 0 || Qd.rows() == Q.rows() ? chunks(Q.rows()) : decltype(chunks(0)){{0, Q.rows()}};
  if (parts.size() > 1) {
    FullFactorResult r;
    std::vector<Eigen::MatrixXd> d, log_det, bias, gravity_torque;
    for (const auto& [first, size] : parts) {
      FullFactorResult p =
          factorSplit(model_id, Q.middleRows(first, size), flags, split::rowsOf(Qd, first, size), payload);
      split::joinInfo(r, p, d.empty());
      split::moveAppend(r.inertia, p.inertia);
      split::moveAppend(r.u, p.u);
      split::moveAppend(r.convective, p.convective);
      split::moveAppend(r.inverse, p.inverse);
      d.push_back(std::move(p.d));
      log_det.emplace_back(p.log_det);
      bias.push_back(std::move(p.bias));
      gravity_torque.push_back(std::move(p.gravity_torque));
    }
    r.d = split::stackRows(d);
    r.log_det = split::stackRows(log_det);
    r.bias = split::stackRows(bias);
    r.gravity_torque = split::stackRows(gravity_torque);
    return r;
  }
  v1::FullFactorRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(dofOf(model_id, Q, Qd)));
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  request.set_convective(flags.convective);
  request.set_bias(flags.bias);
  request.set_gravity_torque(flags.gravity_torque);
  request.set_inverse(flags.inverse);
  if (payload) convert::writePayload(request.mutable_payload(), *payload);
  v1::FullFactorResponse response;
  call("FullFactor", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.FullFactor(&ctx, request, &response);
  });
  FullFactorResult r;
  convert::fillInfo(r, response);
  const int count = static_cast<int>(response.count()), dof = static_cast<int>(response.dof());
  convert::expectSize(response.inertia_size(), static_cast<std::int64_t>(count) * dof * dof, "inertia",
                      "FullFactor");
  r.inertia = convert::checkedBlocks(response.inertia(), count, dof, dof, "inertia", "FullFactor");
  convert::expectSize(response.u_size(), static_cast<std::int64_t>(count) * dof * dof, "u", "FullFactor");
  r.u = convert::checkedBlocks(response.u(), count, dof, dof, "u", "FullFactor");
  convert::expectSize(response.d_size(), static_cast<std::int64_t>(count) * dof, "d", "FullFactor");
  r.d = convert::rows(response.d().data(), count, dof);
  convert::expectSize(response.log_det_size(), count, "log_det", "FullFactor");
  r.log_det = convert::vector(response.log_det());
  r.convective = convert::checkedBlocks(response.convective(), count, dof, dof, "convective", "FullFactor");
  r.bias = convert::checkedRows(response.bias(), count, dof, "bias", "FullFactor");
  r.gravity_torque =
      convert::checkedRows(response.gravity_torque(), count, dof, "gravity_torque", "FullFactor");
  r.inverse = convert::checkedBlocks(response.inverse(), count, dof, dof, "inverse", "FullFactor");
  return r;
}

std::unique_ptr<StreamSession> Client::openStream() const {
  return std::unique_ptr<StreamSession>(new StreamSession(*this));
}

}  // namespace denoc::client
