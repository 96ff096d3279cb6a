// good_client: the well-behaved client of the hostile-client harness (tests/hostile/hostile.py). Registers a
// random 7-DOF DH chain, then calls InverseDynamics (one state, a fresh random state each call) until its
// time is up or a stop file appears, and checks every answer against the core computed in this process
// (|a - b| <= 1e-12 max(1, |b|)). Prints one JSON object: calls, failures by status code (with the first
// message), wrong answers, latency percentiles in microseconds. Timing is reported, never judged.
//   good_client --address 127.0.0.1:PORT [--seconds S] [--stop-file PATH] [--pause-ms MS] [--token T]
//               [--states N] [--stream 1] [--tls-ca CA --tls-cert CRT --tls-key KEY]
// --states: states per call (a batch); --stream 1: one state per round trip on one bidirectional Stream;
// --tls-*: mutual TLS (the front, deploy/nginx), the server's name taken as "localhost".
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "denoc/v1/dynamics.grpc.pb.h"
#include "test_support.hpp"

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  std::string address, stop_file, token, tls_ca, tls_cert, tls_key;
  double seconds = 10;
  int pause_ms = 2, states = 1;
  bool stream_mode = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--address")
      address = v;
    else if (k == "--seconds")
      seconds = std::stod(v);
    else if (k == "--stop-file")
      stop_file = v;
    else if (k == "--pause-ms")
      pause_ms = std::stoi(v);
    else if (k == "--token")
      token = v;
    else if (k == "--states")
      states = std::stoi(v);
    else if (k == "--stream")
      stream_mode = v == "1";
    else if (k == "--tls-ca")
      tls_ca = v;
    else if (k == "--tls-cert")
      tls_cert = v;
    else if (k == "--tls-key")
      tls_key = v;
  }
  if (address.empty()) {
    std::fprintf(stderr,
                 "usage: good_client --address HOST:PORT [--seconds S] [--stop-file P] [--pause-ms MS]\n");
    return 2;
  }
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  auto credentials = grpc::InsecureChannelCredentials();
  if (!tls_ca.empty()) {
    auto read = [](const std::string& path) {
      std::ifstream f(path);
      std::stringstream ss;
      ss << f.rdbuf();
      return ss.str();
    };
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = read(tls_ca);
    if (!tls_cert.empty()) ssl.pem_cert_chain = read(tls_cert);
    if (!tls_key.empty()) ssl.pem_private_key = read(tls_key);
    credentials = grpc::SslCredentials(ssl);
    args.SetSslTargetNameOverride("localhost");
  }
  auto stub = denoc::v1::Dynamics::NewStub(grpc::CreateCustomChannel(address, credentials, args));
  auto context = [&token](std::chrono::seconds timeout) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + timeout);
    if (!token.empty()) c->AddMetadata("authorization", "Bearer " + token);
    return c;
  };
  const denoc::DHSpec dh = denoc::test::randomChain(7, 77);
  const denoc::Model model = denoc::buildModelFromDH(dh);
  denoc::v1::RegisterModelResponse reg;
  std::map<std::string, int> failures;
  std::string first_message;
  for (int attempt = 0; attempt < 20; ++attempt) {
    const grpc::Status st = stub->RegisterModel(context(30s).get(), denoc::test::dhRequest(dh), &reg);
    if (st.ok()) break;
    failures["register:" + std::to_string(st.error_code())]++;
    if (first_message.empty()) first_message = st.error_message();
    std::this_thread::sleep_for(100ms);
  }
  long calls = 0, wrong = 0, failed = 0;
  std::vector<double> us;
  auto check = [&](const double* got, int size, const std::vector<double>& want) {
    bool same = size == static_cast<int>(want.size());
    for (std::size_t i = 0; same && i < want.size(); ++i)
      same = std::abs(got[i] - want[i]) <= 1e-12 * std::max(1.0, std::abs(want[i]));
    wrong += same ? 0 : 1;
  };
  auto fail = [&](const grpc::Status& st) {
    ++failed;
    failures[std::to_string(st.error_code())]++;
    if (first_message.empty()) first_message = st.error_message();
  };
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto running = [&] {
    return std::chrono::steady_clock::now() < end &&
           (stop_file.empty() || !std::filesystem::exists(stop_file));
  };
  std::unique_ptr<grpc::ClientContext> stream_ctx;
  std::unique_ptr<grpc::ClientReaderWriter<denoc::v1::StreamRequest, denoc::v1::StreamResponse>> stream;
  if (stream_mode) {
    stream_ctx = context(std::chrono::seconds(static_cast<long>(seconds) + 60));
    stream = stub->Stream(stream_ctx.get());
  }
  while (running()) {
    const unsigned seed = 1000 + static_cast<unsigned>(calls);
    const auto q = denoc::test::randomStates(states, 7, seed, 1.5),
               qd = denoc::test::randomStates(states, 7, seed + 1, 2.0),
               qdd = denoc::test::randomStates(states, 7, seed + 2, 3.0);
    const auto t0 = std::chrono::steady_clock::now();
    if (stream_mode) {
      denoc::v1::StreamRequest req;
      req.set_model_id(reg.model_id());
      req.set_sequence(static_cast<std::uint64_t>(calls));
      req.set_computation(denoc::v1::COMPUTATION_INVERSE_DYNAMICS);
      req.mutable_q()->Add(q.begin(), q.begin() + 7);
      req.mutable_qd()->Add(qd.begin(), qd.begin() + 7);
      req.mutable_qdd()->Add(qdd.begin(), qdd.begin() + 7);
      denoc::v1::StreamResponse resp;
      const bool ok = stream->Write(req) && stream->Read(&resp);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      ++calls;
      if (!ok) {
        fail(stream->Finish());
        break;
      }
      check(resp.result().data(), resp.result_size(),
            denoc::test::coreID(model, {q.begin(), q.begin() + 7}, {qd.begin(), qd.begin() + 7},
                                {qdd.begin(), qdd.begin() + 7}));
    } else {
      denoc::v1::InverseDynamicsRequest req;
      req.set_model_id(reg.model_id());
      req.set_count(static_cast<std::uint32_t>(states));
      req.set_dof(7);
      *req.mutable_q() = {q.begin(), q.end()};
      *req.mutable_qd() = {qd.begin(), qd.end()};
      *req.mutable_qdd() = {qdd.begin(), qdd.end()};
      denoc::v1::InverseDynamicsResponse resp;
      const grpc::Status st = stub->InverseDynamics(context(30s).get(), req, &resp);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      ++calls;
      if (!st.ok())
        fail(st);
      else
        check(resp.tau().data(), resp.tau_size(), denoc::test::coreID(model, q, qd, qdd));
    }
    if (pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  if (stream && failed == 0) {
    stream->WritesDone();
    const grpc::Status st = stream->Finish();
    if (!st.ok()) fail(st);
  }
  std::sort(us.begin(), us.end());
  auto at = [&us](double p) {
    return us.empty() ? 0.0 : us[std::min(us.size() - 1, std::size_t(p * us.size()))];
  };
  std::string fails = "{";
  for (const auto& [k, v] : failures) {
    if (fails.size() > 1) fails += ',';
    fails += '"';
    fails += k;
    fails += "\":";
    fails += std::to_string(v);
  }
  fails += "}";
  std::string msg;
  for (const char c : first_message.substr(0, 160)) msg += (c == '"' || c == '\\' || c < 0x20) ? '_' : c;
  std::printf(
      "{\"calls\":%ld,\"failed\":%ld,\"wrong\":%ld,\"failures\":%s,\"first_message\":\"%s\","
      "\"p50_us\":%.0f,\"p99_us\":%.0f,\"max_us\":%.0f,\"registered\":%s}\n",
      calls, failed, wrong, fails.c_str(), msg.c_str(), at(0.5), at(0.99), us.empty() ? 0.0 : us.back(),
      reg.model_id().empty() ? "false" : "true");
  return 0;
}
