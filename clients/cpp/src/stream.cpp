// StreamSession: one bidirectional Stream for a control loop, one state in and one answer out, in order;
// reopened on UNAVAILABLE and after re-registering a model the server no longer has.
#include "denoc/client/stream.hpp"

#include <string>
#include <utility>

#include "convert_internal.hpp"
#include "denoc/client/client.hpp"
#include "retry.hpp"

namespace denoc::client {

namespace {

void put(google::protobuf::RepeatedField<double>* out, const Eigen::VectorXd& v) {
  out->Add(v.data(), v.data() + v.size());
}

// a message of one state: model, computation, q and qd (the caller adds qdd or tau)
v1::StreamRequest stateRequest(const std::string& model_id, v1::Computation computation,
                               const Eigen::VectorXd& q, const Eigen::VectorXd& qd) {
  v1::StreamRequest request;
  request.set_model_id(model_id);
  request.set_computation(computation);
  put(request.mutable_q(), q);
  put(request.mutable_qd(), qd);
  return request;
}

}  // namespace

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

Eigen::VectorXd StreamSession::exchange(v1::StreamRequest request, AnswerInfo* info) {
  if (closed_) throw Error(grpc::StatusCode::FAILED_PRECONDITION, "the stream session is closed", "Stream");
  if (payload_) *request.mutable_payload() = *payload_;
  Backoff backoff(client_->options_, "Stream", false);
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
      if (info) convert::fillInfo(*info, response);
      return convert::vector(response.result());
    }
    // the server ended the stream: its status says why
    stream_->WritesDone();
    const grpc::Status status = stream_->Finish();
    closed_ = true;
    const grpc::StatusCode code = status.ok() ? grpc::StatusCode::UNAVAILABLE : status.error_code();
    const std::string message = status.ok() ? "the server ended the stream" : status.error_message();
    if (code == grpc::StatusCode::UNAVAILABLE && backoff.more(attempt_no)) {
      backoff.wait(attempt_no, code, message);
      open();
      continue;
    }
    if (code == grpc::StatusCode::NOT_FOUND && !reregistered &&
        client_->reregister(request.model_id(), message)) {
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
  v1::StreamRequest request = stateRequest(model_id, v1::COMPUTATION_INVERSE_DYNAMICS, q, qd);
  put(request.mutable_qdd(), qdd);
  return exchange(std::move(request), info);
}

Eigen::VectorXd StreamSession::forwardDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                               const Eigen::VectorXd& qd, const Eigen::VectorXd& tau,
                                               Route route, AnswerInfo* info) {
  v1::StreamRequest request = stateRequest(model_id, v1::COMPUTATION_FORWARD_DYNAMICS, q, qd);
  put(request.mutable_tau(), tau);
  request.set_route(convert::wireRoute(route));
  return exchange(std::move(request), info);
}

Eigen::VectorXd StreamSession::inverseDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                               const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                               const std::vector<LinkWrench>& wrenches, AnswerInfo* info) {
  v1::StreamRequest request = stateRequest(model_id, v1::COMPUTATION_INVERSE_DYNAMICS, q, qd);
  put(request.mutable_qdd(), qdd);
  convert::appendWrenches(request.mutable_wrenches(), wrenches);
  return exchange(std::move(request), info);
}

Eigen::VectorXd StreamSession::forwardDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                               const Eigen::VectorXd& qd, const Eigen::VectorXd& tau,
                                               const std::vector<LinkWrench>& wrenches, Route route,
                                               AnswerInfo* info) {
  v1::StreamRequest request = stateRequest(model_id, v1::COMPUTATION_FORWARD_DYNAMICS, q, qd);
  put(request.mutable_tau(), tau);
  request.set_route(convert::wireRoute(route));
  convert::appendWrenches(request.mutable_wrenches(), wrenches);
  return exchange(std::move(request), info);
}

void StreamSession::close() {
  if (closed_) return;
  closed_ = true;
  stream_->WritesDone();
  const grpc::Status status = stream_->Finish();
  if (!status.ok()) throw Error(status.error_code(), status.error_message(), "Stream");
}

void StreamSession::setPayload(const std::optional<Payload>& payload) {
  payload_.reset();
  if (payload) convert::writePayload(&payload_.emplace(), *payload);
}

}  // namespace denoc::client
