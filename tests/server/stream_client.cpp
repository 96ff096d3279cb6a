// A client that opens a Stream and a Simulate call on a denocd and keeps them busy until it is killed: the
// fault tests kill it (SIGKILL) to see the server notice a client that vanished mid-stream.
//   stream_client ADDRESS MODEL_ID DOF
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <string>
#include <thread>

#include "denoc/v1/dynamics.grpc.pb.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: stream_client ADDRESS MODEL_ID DOF\n");
    return 2;
  }
  const std::string id = argv[2];
  const int dof = std::stoi(argv[3]);
  auto channel = grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  auto stub = denoc::v1::Dynamics::NewStub(channel);
  // a long simulation, read slowly
  std::thread simulate([&] {
    grpc::ClientContext ctx;
    denoc::v1::SimulateRequest req;
    req.set_model_id(id);
    req.set_dof(static_cast<std::uint32_t>(dof));
    for (int j = 0; j < dof; ++j) req.add_q0(0.1), req.add_qd0(0.0);
    req.set_integrator(denoc::v1::INTEGRATOR_RK4);
    req.set_t_end(900.0);  // 90,001 samples: under the default --max-states
    req.set_dt_out(0.01);
    req.set_batch_size(1);
    auto reader = stub->Simulate(&ctx, req);
    denoc::v1::SimulateResponse resp;
    while (reader->Read(&resp)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  // a control loop that never ends
  grpc::ClientContext ctx;
  auto stream = stub->Stream(&ctx);
  denoc::v1::StreamRequest req;
  req.set_model_id(id);
  req.set_computation(denoc::v1::COMPUTATION_INVERSE_DYNAMICS);
  for (int j = 0; j < dof; ++j) req.add_q(0.1), req.add_qd(0.0), req.add_qdd(0.0);
  denoc::v1::StreamResponse resp;
  for (std::uint64_t k = 0;; ++k) {
    req.set_sequence(k);
    if (!stream->Write(req) || !stream->Read(&resp)) break;
    if (k == 0) {
      std::printf("streaming\n");
      std::fflush(stdout);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  simulate.join();
  return 0;
}
