#pragma once

#include <cmath>

namespace denoc {

template <typename S>
void computeLocalPlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                            const Eigen::Ref<const typename Types<S>::VecX>& q) {
  using std::cos;
  using std::sin;
  using Vec3 = typename Types<S>::Vec3;
  for (int i = 0; i < model.n; ++i) {
    const Vec3 com_parent = i == 0 ? Vec3::Zero() : model.com[i - 1];
    if (model.type[i] == JointType::Revolute) {
      // R_i = E_i Rz(q_i)
      rotateAboutZ(model.E[i], S(cos(q[i])), S(sin(q[i])), data.R[i]);
      data.rho[i] = model.s[i] - com_parent;
    } else {
      // the joint displacement moves O_i along E_i z
      data.R[i] = model.E[i];
      data.rho[i] = model.s[i] + model.E[i].col(2) * q[i] - com_parent;
    }
  }
}

template <typename S> void computeCommonPlacements(const ModelTpl<S>& model, DataTpl<S>& data) {
  using Vec3 = typename Types<S>::Vec3;
  for (int i = 0; i < model.n; ++i) {
    if (i == 0) {
      data.R0[0] = data.R[0];
      data.O0[0] = data.rho[0];
    } else {
      data.R0[i] = data.R0[i - 1] * data.R[i];
      data.O0[i] = data.C0[i - 1] + data.R0[i - 1] * data.rho[i];
    }
    data.C0[i] = data.O0[i] + data.R0[i] * model.com[i];
    const Vec3 e = data.R0[i].col(2);
    if (model.type[i] == JointType::Revolute) {
      data.p0[i] << e, data.O0[i].cross(e);
    } else {
      data.p0[i] << Vec3::Zero(), e;
    }
  }
}

template <typename S>
void tipPose(const ModelTpl<S>& model, const DataTpl<S>& data, typename Types<S>::Mat3& rotation,
             typename Types<S>::Vec3& origin) {
  const int last = model.n - 1;
  rotation = data.R0[last] * model.tip_rotation;
  origin = data.O0[last] + data.R0[last] * model.tip_origin;
}

}  // namespace denoc
