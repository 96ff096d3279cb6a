// denoc::client::convert: row-major wire arrays <-> Eigen, DH tables and model descriptions <-> messages
// (used by the client and by tools).
#pragma once

#include <Eigen/Core>

#include "denoc/client/types.hpp"
#include "denoc/dh.hpp"
#include "denoc/v1/dynamics.pb.h"

namespace denoc::client::convert {

/// count x dof matrix from a flat row-major array.
Eigen::MatrixXd rows(const double* data, int count, int dof);
/// Appends a matrix row-major to a repeated field.
void append(google::protobuf::RepeatedField<double>* out, const Eigen::MatrixXd& m);
/// A registration request for a DH table.
v1::RegisterModelRequest dhRequest(const DHSpec& dh);
ModelInfo modelInfo(const v1::ModelInfo& m);

}  // namespace denoc::client::convert
