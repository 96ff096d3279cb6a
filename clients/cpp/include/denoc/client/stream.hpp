// denoc::client::StreamSession: a bidirectional Stream session for control loops, opened by
// Client::openStream().
#pragma once

#include <grpcpp/grpcpp.h>

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "denoc/client/types.hpp"
#include "denoc/v1/dynamics.grpc.pb.h"

namespace denoc::client {

class Client;

/// A bidirectional Stream session for control loops: one state in, one answer out, in order. Not
/// thread-safe (one control loop per session). When the server ends the stream with NOT_FOUND for a model
/// this client registered, the session re-registers it, reopens the stream and sends the state again.
class StreamSession {
 public:
  ~StreamSession();
  StreamSession(const StreamSession&) = delete;
  StreamSession& operator=(const StreamSession&) = delete;

  /// tau for one state; info (if given) receives the answer's model id, gravity and compute time.
  Eigen::VectorXd inverseDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                  AnswerInfo* info = nullptr);
  /// qdd for one state.
  Eigen::VectorXd forwardDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& qd, const Eigen::VectorXd& tau,
                                  Route route = Route::Saha, AnswerInfo* info = nullptr);
  /// The same with external wrenches on named frames (LinkWrench of 6 values each).
  Eigen::VectorXd inverseDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& qd, const Eigen::VectorXd& qdd,
                                  const std::vector<LinkWrench>& wrenches, AnswerInfo* info = nullptr);
  Eigen::VectorXd forwardDynamics(const std::string& model_id, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& qd, const Eigen::VectorXd& tau,
                                  const std::vector<LinkWrench>& wrenches, Route route = Route::Saha,
                                  AnswerInfo* info = nullptr);
  /// The payload held by a frame (Payload::link; the tip by default) that every following message declares
  /// (none: the model as registered); the server keeps the model with it while it stays the same.
  void setPayload(const std::optional<Payload>& payload);
  /// Ends the stream (WritesDone, then the final status); throws Error if the server ended it with an error.
  void close();
  /// Messages answered so far.
  std::uint64_t answered() const { return sequence_; }

 private:
  friend class Client;
  explicit StreamSession(const Client& client);
  void open();
  /// Sends one state (with the session's payload) and returns its answer's result; info (if given) receives
  /// the answer's model id, gravity and compute time.
  Eigen::VectorXd exchange(v1::StreamRequest request, AnswerInfo* info);

  const Client* client_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::shared_ptr<v1::Dynamics::Stub> stub_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StreamRequest, v1::StreamResponse>> stream_;
  std::uint64_t sequence_ = 0;
  bool closed_ = false;
  std::optional<v1::Payload> payload_;
};

}  // namespace denoc::client
