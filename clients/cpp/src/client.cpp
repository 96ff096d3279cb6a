#include "denoc/client/client.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>

#include "denoc/model_io.hpp"

namespace denoc::client {

namespace {

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

Eigen::Vector3d vec3(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }

v1::Vec3 vec3(const Eigen::Vector3d& v) {
  v1::Vec3 m;
  m.set_x(v.x());
  m.set_y(v.y());
  m.set_z(v.z());
  return m;
}

// the one conversion of a Payload to its message (every call that carries one)
void writePayload(v1::Payload* out, const Payload& p) {
  out->set_mass(p.mass);
  *out->mutable_com() = vec3(p.com);
  v1::Inertia* i = out->mutable_inertia();
  i->set_ixx(p.inertia(0, 0));
  i->set_ixy(p.inertia(0, 1));
  i->set_ixz(p.inertia(0, 2));
  i->set_iyy(p.inertia(1, 1));
  i->set_iyz(p.inertia(1, 2));
  i->set_izz(p.inertia(2, 2));
}

template <typename Response>
void fillInfo(AnswerInfo& info, const Response& r) {
  info.model_id = r.model_id();
  info.gravity = vec3(r.gravity());
  info.compute_time = std::chrono::nanoseconds(r.compute_time_ns());
}

v1::ForwardRoute wireRoute(Route r) {
  switch (r) {
    case Route::Fixman:
      return v1::FORWARD_ROUTE_FIXMAN;
    case Route::Cholesky:
      return v1::FORWARD_ROUTE_CHOLESKY;
    case Route::Saha:
      break;
  }
  return v1::FORWARD_ROUTE_SAHA;
}

Route route(v1::ForwardRoute r) {
  return r == v1::FORWARD_ROUTE_FIXMAN     ? Route::Fixman
         : r == v1::FORWARD_ROUTE_CHOLESKY ? Route::Cholesky
                                           : Route::Saha;
}

// Checks that an answer's array has the size its count and dof announce (a corrupt answer is an error, never
// an out-of-bounds read).
void expectSize(int got, std::int64_t want, const char* field, const char* call) {
  if (got != want) {
    throw Error(grpc::StatusCode::INTERNAL,
                std::string("the answer's ") + field + " has " + std::to_string(got) + " values, expected " +
                    std::to_string(want),
                call);
  }
}

// A matrix's rows [first, first + size), or the empty matrix as it is (an absent optional input).
Eigen::MatrixXd rowsOf(const Eigen::MatrixXd& m, Eigen::Index first, Eigen::Index size) {
  return m.size() == 0 ? m : Eigen::MatrixXd(m.middleRows(first, size));
}

// The parts' rows one after the other (the empty matrix when the parts are empty).
Eigen::MatrixXd stackRows(const std::vector<Eigen::MatrixXd>& parts) {
  Eigen::Index rows = 0, cols = 0;
  for (const auto& p : parts) {
    rows += p.rows();
    cols = std::max(cols, p.cols());
  }
  if (rows == 0) return {};
  Eigen::MatrixXd out(rows, cols);
  Eigen::Index at = 0;
  for (const auto& p : parts) {
    if (p.rows() == 0) continue;
    out.middleRows(at, p.rows()) = p;
    at += p.rows();
  }
  return out;
}

// Moves from's items after to's (the per-state matrices of a split batch's parts, in order).
template <typename T>
void moveAppend(std::vector<T>& to, std::vector<T>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// The answer of a split batch: the first part's model and gravity, the parts' compute times summed.
void joinInfo(AnswerInfo& into, const AnswerInfo& part, bool first) {
  if (first) {
    into.model_id = part.model_id;
    into.gravity = part.gravity;
  }
  into.compute_time += part.compute_time;
}

std::vector<Eigen::MatrixXd> matrices(const google::protobuf::RepeatedField<double>& f, int count, int dof,
                                      const char* field) {
  std::vector<Eigen::MatrixXd> out;
  if (f.empty()) return out;
  expectSize(f.size(), static_cast<std::int64_t>(count) * dof * dof, field, "FullFactor");
  out.reserve(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {
    out.push_back(convert::rows(f.data() + static_cast<std::ptrdiff_t>(k) * dof * dof, dof, dof));
  }
  return out;
}

Eigen::MatrixXd batch(const google::protobuf::RepeatedField<double>& f, int count, int dof, const char* field,
                      const char* call) {
  if (f.empty()) return {};
  expectSize(f.size(), static_cast<std::int64_t>(count) * dof, field, call);
  return convert::rows(f.data(), count, dof);
}

Eigen::VectorXd vector(const google::protobuf::RepeatedField<double>& f) {
  return f.empty() ? Eigen::VectorXd()
                   : Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(f.data(), f.size()));
}

}  // namespace

// ---------------------------------------------------------------------------------------------- Error

std::string codeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "CODE_" + std::to_string(static_cast<int>(code));
  }
}

Error::Error(grpc::StatusCode code, std::string message, std::string call)
    : std::runtime_error((call.empty() ? std::string() : call + ": ") + codeName(code) + ": " + message),
      code_(code),
      message_(std::move(message)),
      call_(std::move(call)) {}

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
  const RetryPolicy& policy = options_.retry;
  thread_local std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(1.0 - policy.jitter, 1.0 + policy.jitter);
  double backoff_ms = static_cast<double>(policy.initial_backoff.count());
  bool reregistered = false;
  for (int attempt_no = 1;; ++attempt_no) {
    const auto stub = this->stub();
    const auto ctx = context(options_.deadline);
    const grpc::Status status = attempt(*stub, *ctx);
    if (status.ok()) return;
    const grpc::StatusCode code = status.error_code();
    if (code == grpc::StatusCode::UNAVAILABLE && retry && attempt_no < policy.max_attempts) {
      const auto wait = std::chrono::milliseconds(static_cast<std::int64_t>(backoff_ms * jitter(rng)));
      if (options_.on_retry) options_.on_retry({name, attempt_no, code, status.error_message(), wait});
      std::this_thread::sleep_for(wait);
      backoff_ms = std::min(backoff_ms * policy.multiplier, static_cast<double>(policy.max_backoff.count()));
      continue;
    }
    if (code == grpc::StatusCode::NOT_FOUND && !model_id.empty() && options_.reregister && !reregistered &&
        reregister(model_id)) {
      reregistered = true;
      --attempt_no;  // the re-registration does not use up an attempt
      continue;
    }
    throw Error(code, status.error_message(), name);
  }
}

bool Client::reregister(const std::string& model_id) const {
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
                                  const std::optional<std::string>& name,
                                  const std::vector<double>& armature) {
  v1::RegisterModelRequest r;
  r.mutable_urdf()->set_text(urdf_text);
  r.mutable_urdf()->set_base_link(base_link);
  r.mutable_urdf()->set_tip_link(tip_link);
  if (gravity) *r.mutable_gravity() = vec3(*gravity);
  if (name) r.set_name(*name);
  for (double a : armature) r.add_armature(a);
  return registerModel(r);
}

Registration Client::registerDH(const DHSpec& dh) { return registerModel(convert::dhRequest(dh)); }

Registration Client::registerModelFile(const std::string& path, const std::string& base_link,
                                       const std::string& tip_link,
                                       const std::optional<Eigen::Vector3d>& gravity) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".urdf") return registerUrdf(readFile(path, "URDF model"), base_link, tip_link, gravity);
  if (ext == ".json") {
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
  return convert::modelInfo(response.model());
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
    for (const auto& m : response.models()) out.push_back(convert::modelInfo(m));
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
                                      const std::optional<Payload>& payload) {
  const auto parts = Qd.rows() == Q.rows() && Qdd.rows() == Q.rows() &&
                             (tip_wrench.size() == 0 || tip_wrench.rows() == Q.rows())
                         ? chunks(Q.rows())
                         : decltype(chunks(0)){{0, Q.rows()}};  // a shape the server refuses: as it is
  if (parts.size() > 1) {
    InverseDynamicsResult r;
    std::vector<Eigen::MatrixXd> tau;
    for (const auto& [first, size] : parts) {
      InverseDynamicsResult p =
          idBatch(model_id, Q.middleRows(first, size), Qd.middleRows(first, size),
                  Qdd.middleRows(first, size), rowsOf(tip_wrench, first, size), payload);
      joinInfo(r, p, tau.empty());
      tau.push_back(std::move(p.tau));
    }
    r.tau = stackRows(tau);
    return r;
  }
  v1::InverseDynamicsRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(Q.cols()));
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  convert::append(request.mutable_qdd(), Qdd);
  convert::append(request.mutable_tip_wrench(), tip_wrench);
  if (payload) writePayload(request.mutable_payload(), *payload);
  v1::InverseDynamicsResponse response;
  call("InverseDynamics", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.InverseDynamics(&ctx, request, &response);
  });
  InverseDynamicsResult r;
  fillInfo(r, response);
  const int count = static_cast<int>(response.count()), dof = static_cast<int>(response.dof());
  expectSize(response.tau_size(), static_cast<std::int64_t>(count) * dof, "tau", "InverseDynamics");
  r.tau = convert::rows(response.tau().data(), count, dof);
  return r;
}

ForwardDynamicsResult Client::fdBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                      const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau, Route route_,
                                      const std::optional<Payload>& payload) {
  const auto parts =
      Qd.rows() == Q.rows() && Tau.rows() == Q.rows() ? chunks(Q.rows()) : decltype(chunks(0)){{0, Q.rows()}};
  if (parts.size() > 1) {
    ForwardDynamicsResult r;
    std::vector<Eigen::MatrixXd> qdd;
    for (const auto& [first, size] : parts) {
      ForwardDynamicsResult p = fdBatch(model_id, Q.middleRows(first, size), Qd.middleRows(first, size),
                                        Tau.middleRows(first, size), route_, payload);
      joinInfo(r, p, qdd.empty());
      r.route = p.route;
      qdd.push_back(std::move(p.qdd));
    }
    r.qdd = stackRows(qdd);
    return r;
  }
  v1::ForwardDynamicsRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(Q.cols()));
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  convert::append(request.mutable_tau(), Tau);
  request.set_route(wireRoute(route_));
  if (payload) writePayload(request.mutable_payload(), *payload);
  v1::ForwardDynamicsResponse response;
  call("ForwardDynamics", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.ForwardDynamics(&ctx, request, &response);
  });
  ForwardDynamicsResult r;
  fillInfo(r, response);
  const int count = static_cast<int>(response.count()), dof = static_cast<int>(response.dof());
  expectSize(response.qdd_size(), static_cast<std::int64_t>(count) * dof, "qdd", "ForwardDynamics");
  r.qdd = convert::rows(response.qdd().data(), count, dof);
  r.route = route(response.route());
  return r;
}

FullFactorResult Client::factorBatch(const std::string& model_id, const Eigen::MatrixXd& Q,
                                     const FactorFlags& flags, const Eigen::MatrixXd& Qd,
                                     const std::optional<Payload>& payload) {
  const auto parts =
      Qd.size() == 0 || Qd.rows() == Q.rows() ? chunks(Q.rows()) : decltype(chunks(0)){{0, Q.rows()}};
  if (parts.size() > 1) {
    FullFactorResult r;
    std::vector<Eigen::MatrixXd> d, log_det, bias, gravity_torque;
    for (const auto& [first, size] : parts) {
      FullFactorResult p =
          factorBatch(model_id, Q.middleRows(first, size), flags, rowsOf(Qd, first, size), payload);
      joinInfo(r, p, d.empty());
      moveAppend(r.inertia, p.inertia);
      moveAppend(r.u, p.u);
      moveAppend(r.convective, p.convective);
      moveAppend(r.inverse, p.inverse);
      d.push_back(std::move(p.d));
      log_det.emplace_back(p.log_det);
      bias.push_back(std::move(p.bias));
      gravity_torque.push_back(std::move(p.gravity_torque));
    }
    r.d = stackRows(d);
    r.log_det = stackRows(log_det);
    r.bias = stackRows(bias);
    r.gravity_torque = stackRows(gravity_torque);
    return r;
  }
  v1::FullFactorRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(Q.cols()));
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  request.set_convective(flags.convective);
  request.set_bias(flags.bias);
  request.set_gravity_torque(flags.gravity_torque);
  request.set_inverse(flags.inverse);
  if (payload) writePayload(request.mutable_payload(), *payload);
  v1::FullFactorResponse response;
  call("FullFactor", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.FullFactor(&ctx, request, &response);
  });
  FullFactorResult r;
  fillInfo(r, response);
  const int count = static_cast<int>(response.count()), dof = static_cast<int>(response.dof());
  expectSize(response.inertia_size(), static_cast<std::int64_t>(count) * dof * dof, "inertia", "FullFactor");
  r.inertia = matrices(response.inertia(), count, dof, "inertia");
  expectSize(response.u_size(), static_cast<std::int64_t>(count) * dof * dof, "u", "FullFactor");
  r.u = matrices(response.u(), count, dof, "u");
  expectSize(response.d_size(), static_cast<std::int64_t>(count) * dof, "d", "FullFactor");
  r.d = convert::rows(response.d().data(), count, dof);
  expectSize(response.log_det_size(), count, "log_det", "FullFactor");
  r.log_det = vector(response.log_det());
  r.convective = matrices(response.convective(), count, dof, "convective");
  r.bias = batch(response.bias(), count, dof, "bias", "FullFactor");
  r.gravity_torque = batch(response.gravity_torque(), count, dof, "gravity_torque", "FullFactor");
  r.inverse = matrices(response.inverse(), count, dof, "inverse");
  return r;
}

SimulationSummary Client::simulate(const std::string& model_id, const Eigen::VectorXd& q0,
                                   const Eigen::VectorXd& qd0, const SimulateOptions& o,
                                   const BatchCallback& on_batch) {
  v1::SimulateRequest request;
  request.set_model_id(model_id);
  request.set_dof(static_cast<std::uint32_t>(q0.size()));
  for (Eigen::Index i = 0; i < q0.size(); ++i) request.add_q0(q0[i]);
  for (Eigen::Index i = 0; i < qd0.size(); ++i) request.add_qd0(qd0[i]);
  request.set_t_end(o.t_end);
  request.set_integrator(o.integrator == Integrator::RK4 ? v1::INTEGRATOR_RK4 : v1::INTEGRATOR_DOPRI5);
  request.set_route(wireRoute(o.route));
  request.set_dt_out(o.dt_out);
  for (double t : o.sample_times) request.add_sample_times(t);
  request.set_step(o.step);
  request.set_rtol(o.rtol);
  request.set_atol(o.atol);
  request.set_initial_step(o.initial_step);
  request.set_max_step(o.max_step);
  request.set_max_steps(o.max_steps);
  for (double t : o.torque_times) request.add_torque_times(t);
  if (o.torque_times.empty() && o.torque.cols() == 1 && o.torque.rows() > 1) {
    convert::append(request.mutable_torque_values(), o.torque.transpose());  // a constant given as a column
  } else {
    convert::append(request.mutable_torque_values(), o.torque);
  }
  for (Eigen::Index i = 0; i < o.damping.size(); ++i) request.add_damping(o.damping[i]);
  request.set_batch_size(o.batch_size);

  const RetryPolicy& policy = options_.retry;
  double backoff_ms = static_cast<double>(policy.initial_backoff.count());
  bool reregistered = false;
  for (int attempt_no = 1;; ++attempt_no) {
    SimulationSummary summary;
    const auto stub = this->stub();
    const auto ctx = context(options_.deadline);
    auto reader = stub->Simulate(ctx.get(), request);
    v1::SimulateResponse message;
    bool stopped = false;
    while (!stopped && reader->Read(&message)) {
      SimulationBatch b;
      fillInfo(b, message);
      const int count = static_cast<int>(message.count()), dof = static_cast<int>(message.dof());
      expectSize(message.t_size(), count, "t", "Simulate");
      b.t = vector(message.t());
      b.q = batch(message.q(), count, dof, "q", "Simulate");
      b.qd = batch(message.qd(), count, dof, "qd", "Simulate");
      b.energy = vector(message.energy());
      b.kinetic = vector(message.kinetic());
      b.potential = vector(message.potential());
      b.last = message.last();
      ++summary.batches;
      summary.samples += static_cast<std::size_t>(count);
      summary.compute_time += b.compute_time;
      if (b.last) {
        summary.steps = message.steps();
        summary.rejected_steps = message.rejected_steps();
        summary.evaluations = message.evaluations();
        summary.complete = true;
      }
      if (on_batch && !on_batch(b)) {
        stopped = true;
        ctx->TryCancel();
      }
    }
    const grpc::Status status = reader->Finish();
    if (stopped) return summary;
    if (status.ok()) {
      if (!summary.complete) {
        throw Error(grpc::StatusCode::DATA_LOSS, "the stream ended without its last batch", "Simulate");
      }
      return summary;
    }
    const grpc::StatusCode code = status.error_code();
    if (summary.batches == 0 && code == grpc::StatusCode::UNAVAILABLE && attempt_no < policy.max_attempts) {
      const auto wait = std::chrono::milliseconds(static_cast<std::int64_t>(backoff_ms));
      if (options_.on_retry) options_.on_retry({"Simulate", attempt_no, code, status.error_message(), wait});
      std::this_thread::sleep_for(wait);
      backoff_ms = std::min(backoff_ms * policy.multiplier, static_cast<double>(policy.max_backoff.count()));
      continue;
    }
    if (summary.batches == 0 && code == grpc::StatusCode::NOT_FOUND && options_.reregister && !reregistered &&
        reregister(model_id)) {
      reregistered = true;
      --attempt_no;
      continue;
    }
    throw Error(code, status.error_message(), "Simulate");
  }
}

SimulationResult Client::simulate(const std::string& model_id, const Eigen::VectorXd& q0,
                                  const Eigen::VectorXd& qd0, const SimulateOptions& options) {
  std::vector<SimulationBatch> batches;
  SimulationResult result;
  result.summary = simulate(model_id, q0, qd0, options, [&](const SimulationBatch& b) {
    batches.push_back(b);
    return true;
  });
  const auto n = static_cast<Eigen::Index>(result.summary.samples);
  const Eigen::Index dof = q0.size();
  result.t.resize(n);
  result.q.resize(n, dof);
  result.qd.resize(n, dof);
  result.energy.resize(n);
  result.kinetic.resize(n);
  result.potential.resize(n);
  Eigen::Index row = 0;
  for (const SimulationBatch& b : batches) {
    const Eigen::Index c = b.t.size();
    result.t.segment(row, c) = b.t;
    if (b.q.size() != 0) result.q.middleRows(row, c) = b.q;
    if (b.qd.size() != 0) result.qd.middleRows(row, c) = b.qd;
    if (b.energy.size() == c) result.energy.segment(row, c) = b.energy;
    if (b.kinetic.size() == c) result.kinetic.segment(row, c) = b.kinetic;
    if (b.potential.size() == c) result.potential.segment(row, c) = b.potential;
    row += c;
  }
  if (!batches.empty()) {
    result.info.model_id = batches.back().model_id;
    result.info.gravity = batches.back().gravity;
  }
  result.info.compute_time = result.summary.compute_time;
  return result;
}

std::unique_ptr<StreamSession> Client::openStream() const {
  return std::unique_ptr<StreamSession>(new StreamSession(*this));
}

// --------------------------------------------------------------------------------------- StreamSession

StreamSession::StreamSession(const Client& client) : client_(&client) { open(); }

StreamSession::~StreamSession() {
  if (!closed_ && stream_) {
    context_->TryCancel();
    stream_->Finish();
  }
}

void StreamSession::open() {
  context_ = client_->context(client_->options_.stream_deadline);
  stub_ = client_->stub();
  stream_ = stub_->Stream(context_.get());
  closed_ = false;
}

v1::StreamResponse StreamSession::exchange(v1::StreamRequest request) {
  if (closed_) throw Error(grpc::StatusCode::FAILED_PRECONDITION, "the stream session is closed", "Stream");
  const RetryPolicy& policy = client_->options_.retry;
  double backoff_ms = static_cast<double>(policy.initial_backoff.count());
  bool reregistered = false;
  request.set_sequence(sequence_ + 1);
  for (int attempt_no = 1;; ++attempt_no) {
    v1::StreamResponse response;
    if (stream_->Write(request) && stream_->Read(&response)) {
      if (response.sequence() != request.sequence()) {
        throw Error(grpc::StatusCode::INTERNAL,
                    "answer out of order: sequence " + std::to_string(response.sequence()) + ", expected " +
                        std::to_string(request.sequence()),
                    "Stream");
      }
      ++sequence_;
      return response;
    }
    // the server ended the stream: its status says why
    stream_->WritesDone();
    const grpc::Status status = stream_->Finish();
    closed_ = true;
    const grpc::StatusCode code = status.ok() ? grpc::StatusCode::UNAVAILABLE : status.error_code();
    const std::string message = status.ok() ? "the server ended the stream" : status.error_message();
    if (code == grpc::StatusCode::UNAVAILABLE && attempt_no < policy.max_attempts) {
      const auto wait = std::chrono::milliseconds(static_cast<std::int64_t>(backoff_ms));
      if (client_->options_.on_retry) client_->options_.on_retry({"Stream", attempt_no, code, message, wait});
      std::this_thread::sleep_for(wait);
      backoff_ms = std::min(backoff_ms * policy.multiplier, static_cast<double>(policy.max_backoff.count()));
      open();
      continue;
    }
    if (code == grpc::StatusCode::NOT_FOUND && client_->options_.reregister && !reregistered &&
        client_->reregister(request.model_id())) {
      reregistered = true;
      --attempt_no;
      open();
      continue;
    }
    throw Error(code, message, "Stream");
  }
}

Eigen::VectorXd StreamSession::inverseDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                               const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                               AnswerInfo* info) {
  v1::StreamRequest request;
  request.set_model_id(model_id);
  request.set_computation(v1::COMPUTATION_INVERSE_DYNAMICS);
  request.mutable_q()->Add(q.data(), q.data() + q.size());
  request.mutable_qd()->Add(qd.data(), qd.data() + qd.size());
  request.mutable_qdd()->Add(qdd.data(), qdd.data() + qdd.size());
  if (payload_) *request.mutable_payload() = *payload_;
  const v1::StreamResponse r = exchange(std::move(request));
  if (info) fillInfo(*info, r);
  return vector(r.result());
}

Eigen::VectorXd StreamSession::forwardDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                               const Eigen::VectorXd& qd, const Eigen::VectorXd& tau,
                                               Route route_, AnswerInfo* info) {
  v1::StreamRequest request;
  request.set_model_id(model_id);
  request.set_computation(v1::COMPUTATION_FORWARD_DYNAMICS);
  request.mutable_q()->Add(q.data(), q.data() + q.size());
  request.mutable_qd()->Add(qd.data(), qd.data() + qd.size());
  request.mutable_tau()->Add(tau.data(), tau.data() + tau.size());
  if (payload_) *request.mutable_payload() = *payload_;
  request.set_route(wireRoute(route_));
  const v1::StreamResponse r = exchange(std::move(request));
  if (info) fillInfo(*info, r);
  return vector(r.result());
}

void StreamSession::close() {
  if (closed_) return;
  closed_ = true;
  stream_->WritesDone();
  const grpc::Status status = stream_->Finish();
  if (!status.ok()) throw Error(status.error_code(), status.error_message(), "Stream");
}

}  // namespace denoc::client

namespace denoc::client {

namespace {

// the parts of a Derivatives request both directions share: model, shape, direction, q, qd, tip wrench,
// payload (the caller adds qdd or tau)
v1::DerivativesRequest derivativesRequest(const std::string& model_id, v1::DerivativeOf of,
                                          const Eigen::MatrixXd& Q, const Eigen::MatrixXd& Qd,
                                          const std::optional<Payload>& payload,
                                          const Eigen::MatrixXd& tip_wrench) {
  v1::DerivativesRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(Q.cols()));
  request.set_of(of);
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  convert::append(request.mutable_tip_wrench(), tip_wrench);
  if (payload) writePayload(request.mutable_payload(), *payload);
  return request;
}

// count matrices rows x cols from a row-major field (empty when the field is)
std::vector<Eigen::MatrixXd> blocks(const google::protobuf::RepeatedField<double>& f, std::int64_t count,
                                    int rows, int cols, const char* field, const char* call) {
  std::vector<Eigen::MatrixXd> out;
  if (f.empty()) return out;
  expectSize(f.size(), count * rows * cols, field, call);
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k)
    out.push_back(convert::rows(f.data() + k * rows * cols, rows, cols));
  return out;
}

Eigen::MatrixXd rowsOrEmpty(const google::protobuf::RepeatedField<double>& f, int count, int cols,
                            const char* field, const char* call) {
  if (f.empty()) return {};
  expectSize(f.size(), static_cast<std::int64_t>(count) * cols, field, call);
  return convert::rows(f.data(), count, cols);
}

}  // namespace

void StreamSession::setPayload(const std::optional<Payload>& payload) {
  payload_.reset();
  if (payload) writePayload(&payload_.emplace(), *payload);
}

KinematicsResult Client::kinematics(const std::string& model_id, const Eigen::MatrixXd& Q,
                                    const KinematicsOptions& o, const Eigen::MatrixXd& Qd) {
  const auto parts =
      Qd.size() == 0 || Qd.rows() == Q.rows() ? chunks(Q.rows()) : decltype(chunks(0)){{0, Q.rows()}};
  if (parts.size() > 1) {
    KinematicsResult r;
    std::vector<Eigen::MatrixXd> origin, jdot_qd;
    for (const auto& [first, size] : parts) {
      KinematicsResult p = kinematics(model_id, Q.middleRows(first, size), o, rowsOf(Qd, first, size));
      joinInfo(r, p, origin.empty());
      moveAppend(r.rotation, p.rotation);
      moveAppend(r.jacobian, p.jacobian);
      moveAppend(r.lambda, p.lambda);
      moveAppend(r.frame_rotations, p.frame_rotations);
      moveAppend(r.frame_origins, p.frame_origins);
      origin.push_back(std::move(p.origin));
      jdot_qd.push_back(std::move(p.jdot_qd));
    }
    r.origin = stackRows(origin);
    r.jdot_qd = stackRows(jdot_qd);
    return r;
  }
  v1::KinematicsRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(Q.rows()));
  request.set_dof(static_cast<std::uint32_t>(Q.cols()));
  convert::append(request.mutable_q(), Q);
  convert::append(request.mutable_qd(), Qd);
  request.set_link(o.link);
  *request.mutable_point() = vec3(o.point);
  request.set_reference(o.reference == Reference::Local ? v1::REFERENCE_FRAME_LOCAL
                                                        : v1::REFERENCE_FRAME_BASE);
  request.set_jacobian(o.jacobian);
  request.set_jdot_qd(o.jdot_qd);
  request.set_lambda(o.lambda);
  request.set_lambda_rows(o.lambda_rows == TaskRows::Linear    ? v1::TASK_ROWS_LINEAR
                          : o.lambda_rows == TaskRows::Angular ? v1::TASK_ROWS_ANGULAR
                                                               : v1::TASK_ROWS_FULL);
  request.set_all_frames(o.all_frames);
  if (o.payload) writePayload(request.mutable_payload(), *o.payload);
  v1::KinematicsResponse response;
  call("Kinematics", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.Kinematics(&ctx, request, &response);
  });
  KinematicsResult r;
  fillInfo(r, response);
  const int count = static_cast<int>(response.count()), n = static_cast<int>(response.dof());
  const char* call = "Kinematics";
  for (const auto& m : blocks(response.rotation(), count, 3, 3, "rotation", call)) r.rotation.emplace_back(m);
  expectSize(response.rotation_size(), 9LL * count, "rotation", call);
  r.origin = rowsOrEmpty(response.origin(), count, 3, "origin", call);
  r.jacobian = blocks(response.jacobian(), count, 6, n, "jacobian", call);
  r.jdot_qd = rowsOrEmpty(response.jdot_qd(), count, 6, "jdot_qd", call);
  const int rr = o.lambda_rows == TaskRows::Full ? 6 : 3;
  r.lambda = blocks(response.lambda(), count, rr, rr, "lambda", call);
  if (!response.frame_rotations().empty()) {
    const auto rot = blocks(response.frame_rotations(), static_cast<std::int64_t>(count) * (n + 1), 3, 3,
                            "frame_rotations", call);
    r.frame_origins = blocks(response.frame_origins(), count, n + 1, 3, "frame_origins", call);
    for (int k = 0; k < count; ++k) {
      r.frame_rotations.emplace_back();
      for (int i = 0; i <= n; ++i)
        r.frame_rotations.back().emplace_back(rot[static_cast<std::size_t>(k * (n + 1) + i)]);
    }
  }
  return r;
}

DerivativesResult Client::inverseDynamicsDerivatives(const std::string& model_id, const Eigen::MatrixXd& Q,
                                                     const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Qdd,
                                                     const std::optional<Payload>& payload,
                                                     const Eigen::MatrixXd& tip_wrench) {
  return derivativesBatch(model_id, true, Q, Qd, Qdd, payload, tip_wrench);
}

DerivativesResult Client::forwardDynamicsDerivatives(const std::string& model_id, const Eigen::MatrixXd& Q,
                                                     const Eigen::MatrixXd& Qd, const Eigen::MatrixXd& Tau,
                                                     const std::optional<Payload>& payload,
                                                     const Eigen::MatrixXd& tip_wrench) {
  return derivativesBatch(model_id, false, Q, Qd, Tau, payload, tip_wrench);
}

DerivativesResult Client::derivativesBatch(const std::string& model_id, bool inverse,
                                           const Eigen::MatrixXd& Q, const Eigen::MatrixXd& Qd,
                                           const Eigen::MatrixXd& Third,
                                           const std::optional<Payload>& payload,
                                           const Eigen::MatrixXd& tip_wrench) {
  const auto parts = Qd.rows() == Q.rows() && Third.rows() == Q.rows() &&
                             (tip_wrench.size() == 0 || tip_wrench.rows() == Q.rows())
                         ? chunks(Q.rows())
                         : decltype(chunks(0)){{0, Q.rows()}};  // a shape the server refuses: as it is
  if (parts.size() > 1) {
    DerivativesResult r;
    std::vector<Eigen::MatrixXd> tau, qdd;
    for (const auto& [first, size] : parts) {
      DerivativesResult p =
          derivativesBatch(model_id, inverse, Q.middleRows(first, size), Qd.middleRows(first, size),
                           Third.middleRows(first, size), payload, rowsOf(tip_wrench, first, size));
      joinInfo(r, p, tau.empty() && qdd.empty());
      moveAppend(r.dtau_dq, p.dtau_dq);
      moveAppend(r.dtau_dqd, p.dtau_dqd);
      moveAppend(r.dqdd_dq, p.dqdd_dq);
      moveAppend(r.dqdd_dqd, p.dqdd_dqd);
      moveAppend(r.dqdd_dtau, p.dqdd_dtau);
      tau.push_back(std::move(p.tau));
      qdd.push_back(std::move(p.qdd));
    }
    r.tau = stackRows(tau);
    r.qdd = stackRows(qdd);
    return r;
  }
  v1::DerivativesRequest request = derivativesRequest(
      model_id, inverse ? v1::DERIVATIVE_OF_INVERSE_DYNAMICS : v1::DERIVATIVE_OF_FORWARD_DYNAMICS, Q, Qd,
      payload, tip_wrench);
  convert::append(inverse ? request.mutable_qdd() : request.mutable_tau(), Third);
  v1::DerivativesResponse response;
  call("Derivatives", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.Derivatives(&ctx, request, &response);
  });
  DerivativesResult r;
  fillInfo(r, response);
  const int count = static_cast<int>(response.count()), n = static_cast<int>(response.dof());
  const std::int64_t nn = static_cast<std::int64_t>(count) * n * n;
  if (inverse) {
    expectSize(response.dtau_dq_size(), nn, "dtau_dq", "Derivatives");
    r.dtau_dq = blocks(response.dtau_dq(), count, n, n, "dtau_dq", "Derivatives");
    r.dtau_dqd = blocks(response.dtau_dqd(), count, n, n, "dtau_dqd", "Derivatives");
    r.tau = rowsOrEmpty(response.tau(), count, n, "tau", "Derivatives");
  } else {
    expectSize(response.dqdd_dq_size(), nn, "dqdd_dq", "Derivatives");
    r.dqdd_dq = blocks(response.dqdd_dq(), count, n, n, "dqdd_dq", "Derivatives");
    r.dqdd_dqd = blocks(response.dqdd_dqd(), count, n, n, "dqdd_dqd", "Derivatives");
    r.dqdd_dtau = blocks(response.dqdd_dtau(), count, n, n, "dqdd_dtau", "Derivatives");
    r.qdd = rowsOrEmpty(response.qdd(), count, n, "qdd", "Derivatives");
  }
  return r;
}

RolloutResult Client::rollout(const std::string& model_id, const Eigen::MatrixXd& X0,
                              const std::vector<Eigen::MatrixXd>& U, const RolloutOptions& options) {
  // K * steps states per call: floor(max_states / steps) rollouts per part; controls per rollout travel with
  // their rollout, a shared sequence goes whole to every part
  const bool shared = U.size() == 1 && X0.rows() != 1;
  const auto parts = shared || static_cast<Eigen::Index>(U.size()) == X0.rows()
                         ? chunks(X0.rows(), options.steps)
                         : decltype(chunks(0)){{0, X0.rows()}};  // a shape the server refuses: as it is
  if (parts.size() > 1) {
    RolloutResult r;
    for (const auto& [first, size] : parts) {
      std::vector<Eigen::MatrixXd> u;
      if (shared) {
        u = U;
      } else {
        u.assign(U.begin() + first, U.begin() + first + size);
      }
      RolloutResult p = rollout(model_id, X0.middleRows(first, size), u, options);
      joinInfo(r, p, r.states.empty());
      r.steps = p.steps;
      moveAppend(r.states, p.states);
      moveAppend(r.A, p.A);
      moveAppend(r.B, p.B);
    }
    return r;
  }
  v1::RolloutRequest request;
  request.set_model_id(model_id);
  request.set_count(static_cast<std::uint32_t>(X0.rows()));
  request.set_dof(static_cast<std::uint32_t>(X0.cols() / 2));
  request.set_steps(options.steps);
  request.set_dt(options.dt);
  request.set_scheme(options.scheme == StepScheme::SemiImplicitEuler ? v1::STEP_SCHEME_SEMI_IMPLICIT_EULER
                                                                     : v1::STEP_SCHEME_RK4);
  convert::append(request.mutable_x0(), X0);
  for (const Eigen::MatrixXd& u : U) convert::append(request.mutable_u(), u);
  request.set_shared_controls(U.size() == 1 && X0.rows() != 1);
  request.set_linearize(options.linearize);
  if (options.payload) writePayload(request.mutable_payload(), *options.payload);
  v1::RolloutResponse response;
  call("Rollout", model_id, true, [&](v1::Dynamics::Stub& stub, grpc::ClientContext& ctx) {
    response.Clear();
    return stub.Rollout(&ctx, request, &response);
  });
  RolloutResult r;
  fillInfo(r, response);
  r.steps = response.steps();
  const std::int64_t K = response.count(), T = response.steps();
  const int n = static_cast<int>(response.dof()), x = 2 * n;
  r.states = blocks(response.states(), K, static_cast<int>(T + 1), x, "states", "Rollout");
  expectSize(response.states_size(), K * (T + 1) * x, "states", "Rollout");
  const auto a = blocks(response.a(), K * T, x, x, "a", "Rollout");
  const auto b = blocks(response.b(), K * T, x, n, "b", "Rollout");
  if (!a.empty() && !b.empty()) {
    r.A.resize(static_cast<std::size_t>(K));
    r.B.resize(static_cast<std::size_t>(K));
    for (std::int64_t k = 0; k < K; ++k) {
      for (std::int64_t t = 0; t < T; ++t) {
        r.A[static_cast<std::size_t>(k)].push_back(a[static_cast<std::size_t>(k * T + t)]);
        r.B[static_cast<std::size_t>(k)].push_back(b[static_cast<std::size_t>(k * T + t)]);
      }
    }
  }
  return r;
}

}  // namespace denoc::client
