#include <denoc/client/client.hpp>
#include <iostream>

int main(int argc, char** argv) {
  denoc::client::Client client(argc > 1 ? argv[1] : "127.0.0.1:50051");  // plaintext, default retries
  const std::string id =
      client.registerModelFile(argc > 2 ? argv[2] : "panda_hand.urdf", "", "panda_hand_tcp").model_id;
  const Eigen::MatrixXd Q = Eigen::MatrixXd::Random(3, 7), Qd = Eigen::MatrixXd::Zero(3, 7);
  const Eigen::MatrixXd Qdd = Eigen::MatrixXd::Random(3, 7);      // 3 states, one per row
  const auto id_answer = client.inverseDynamics(id, Q, Qd, Qdd);  // tau: 3 x 7
  const auto fd_answer = client.forwardDynamics(id, Q, Qd, id_answer.tau);
  std::cout << "tau =\n"
            << id_answer.tau << "\nqdd error = " << (fd_answer.qdd - Qdd).norm() << "\nserver compute time "
            << id_answer.compute_time.count() << " ns\n";
}
