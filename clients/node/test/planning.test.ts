// The planners' calls through a real denocd, against finite differences and closed forms on the Panda: the
// Jacobian is the derivative of the frame's origin, dqdd/dtau inverts I(q), one semi-implicit Euler step is
// its formula, and a point-mass payload at the tip adds J_v^T m |g| to the static torques (batch and stream).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { DenocClient, type RegisteredModel } from '../src/index';
import { PANDA_HAND, PANDA_TIP, expectClose, startServer, type Server } from './support';

const Q0 = [0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7];
const ZERO = new Array<number>(7).fill(0);

describe('kinematics, derivatives, rollouts, payloads', { timeout: 120_000 }, () => {
  let server: Server;
  let client: DenocClient;
  let model: RegisteredModel;

  before(async () => {
    server = await startServer();
    client = new DenocClient(server.address);
    model = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
  });
  after(async () => {
    client.close();
    await server.stop();
  });

  it('the Jacobian is the derivative of the origin', async () => {
    const k = await client.kinematics(model.modelId, { q: Q0, jacobian: true });
    const h = 1e-6;
    const q: number[] = [];
    for (const sign of [1, -1]) for (let j = 0; j < 7; j++) q.push(...Q0.map((v, i) => v + (i === j ? sign * h : 0)));
    const p = (await client.kinematics(model.modelId, { q, count: 14 })).origin;
    const jac = k.jacobian ?? new Float64Array(0);
    for (let r = 0; r < 3; r++) {
      for (let j = 0; j < 7; j++) {
        const fd = ((p[3 * j + r] ?? 0) - (p[3 * (j + 7) + r] ?? 0)) / (2 * h);
        assert.ok(Math.abs((jac[(3 + r) * 7 + j] ?? NaN) - fd) < 1e-8, `J(${3 + r}, ${j})`);
      }
    }
  });

  it('dqdd/dtau inverts the inertia matrix', async () => {
    const f = await client.forwardDynamicsDerivatives(model.modelId, { q: Q0, qd: ZERO, tau: ZERO });
    const inertia = (await client.fullFactor(model.modelId, { q: Q0 })).inertia;
    for (let i = 0; i < 7; i++) {
      for (let j = 0; j < 7; j++) {
        let s = 0;
        for (let k = 0; k < 7; k++) s += (f.dqddDtau[i * 7 + k] ?? NaN) * (inertia[k * 7 + j] ?? NaN);
        assert.ok(Math.abs(s - (i === j ? 1 : 0)) < 1e-9, `(I^-1 I)(${i}, ${j}) = ${s}`);
      }
    }
  });

  it('one semi-implicit Euler step is its formula', async () => {
    const dt = 0.01;
    const qd0 = new Array<number>(7).fill(0.1);
    const u = new Array<number>(7).fill(2);
    const r = await client.rollout(model.modelId, { x0: [...Q0, ...qd0], u, count: 1, steps: 1, dt, scheme: 'semiImplicitEuler', linearize: true });
    assert.equal(r.states.length, 28);
    assert.equal(r.a?.length, 196);
    const qdd = (await client.forwardDynamics(model.modelId, { q: Q0, qd: qd0, tau: u })).qdd;
    const qd1 = qd0.map((v, i) => v + dt * (qdd[i] ?? NaN));
    expectClose(r.states.subarray(14), [...Q0.map((v, i) => v + dt * (qd1[i] ?? NaN)), ...qd1], 'x1');
  });

  it('a point-mass payload adds its weight through the Jacobian', async () => {
    const m = 2;
    const before = (await client.inverseDynamics(model.modelId, { q: Q0, qd: ZERO, qdd: ZERO })).tau;
    const jac = (await client.kinematics(model.modelId, { q: Q0, jacobian: true })).jacobian ?? new Float64Array(0);
    const extra = Array.from({ length: 7 }, (_, j) => (jac[5 * 7 + j] ?? NaN) * m * 9.81); // J_z^T m |g|
    const heavy = (await client.inverseDynamics(model.modelId, { q: Q0, qd: ZERO, qdd: ZERO, payload: { mass: m } })).tau;
    expectClose(heavy.map((v, i) => v - (before[i] ?? NaN)), extra, 'payload torques', 1e-10);
    const session = client.openStream();
    session.payload = { mass: m };
    const streamed = await session.inverseDynamics(model.modelId, Q0, ZERO, ZERO);
    await session.close();
    expectClose(streamed.result, heavy, 'stream with payload');
    const again = (await client.inverseDynamics(model.modelId, { q: Q0, qd: ZERO, qdd: ZERO })).tau;
    expectClose(again, before, 'registered model untouched', 0);
  });
});
