// The Panda (panda_hand.urdf, tip panda_hand_tcp) and the Stanford arm (DH) through a real denocd: inverse
// dynamics, forward dynamics (every route) and the full factor on 100 states, compared with the denoc
// command-line tool computing the same model file and states in-process (the C++ core), to 1e-12 relative.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { DenocClient, DenocError, Status, stateOf, type DHLink, type RegisteredModel } from '../src/index';
import {
  PANDA_HAND,
  PANDA_TIP,
  REPO_DIR,
  expectClose,
  randomBatch,
  rng,
  rows,
  runCli,
  startServer,
  type CliState,
  type Server,
} from './support';

const COUNT = 100;

describe('dynamics on 100 states equal the in-process core', { timeout: 180_000 }, () => {
  let server: Server;
  let client: DenocClient;
  let model: RegisteredModel;
  const random = rng(20261122);
  let q: Float64Array;
  let qd: Float64Array;
  let qdd: Float64Array;
  let tau: Float64Array;

  before(async () => {
    server = await startServer();
    client = new DenocClient(server.address);
    model = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
    const n = model.dof;
    q = randomBatch(random, COUNT, n, -2.5, 2.5);
    qd = randomBatch(random, COUNT, n, -2, 2);
    qdd = randomBatch(random, COUNT, n, -5, 5);
    tau = randomBatch(random, COUNT, n, -40, 40);
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('registers panda_hand.urdf with tip panda_hand_tcp: 7 revolute joints, id stable', async () => {
    assert.equal(model.dof, 7);
    assert.match(model.modelId, /^[0-9a-f]{64}$/);
    assert.equal(model.created, true);
    assert.deepEqual(model.jointNames, [1, 2, 3, 4, 5, 6, 7].map((i) => `panda_joint${i}`));
    assert.deepEqual(model.jointTypes, Array(7).fill('revolute'));
    assert.deepEqual(model.gravity, { x: 0, y: 0, z: -9.81 });
    assert.equal(model.source, 'urdf');
    const again = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
    assert.equal(again.modelId, model.modelId);
    assert.equal(again.created, false);
    const info = await client.getModel(model.modelId);
    assert.equal(info.modelId, model.modelId);
    assert.deepEqual(Array.from(info.lower), Array.from(model.lower));
    const listed = await client.listModels();
    assert.ok(listed.some((m) => m.modelId === model.modelId && m.dof === 7));
  });

  it('inverseDynamics: tau of 100 states', async () => {
    const r = await client.inverseDynamics(model.modelId, { q, qd, qdd });
    assert.equal(r.count, COUNT);
    assert.equal(r.dof, 7);
    assert.ok(r.tau instanceof Float64Array);
    assert.equal(r.modelId, model.modelId);
    const n = model.dof;
    const want = await runCli(
      'id',
      PANDA_HAND,
      rows(q, COUNT, n).map((_, k) => ({ q: rows(q, COUNT, n)[k], qd: rows(qd, COUNT, n)[k], qdd: rows(qdd, COUNT, n)[k] })),
      ['--tip-link', PANDA_TIP],
    );
    for (let k = 0; k < COUNT; k++) expectClose(stateOf(r.tau, k, n), want[k]!.tau!, `tau state ${k}`);
  });

  it('forwardDynamics: qdd of 100 states by the saha, cholesky and fixman routes', async () => {
    const n = model.dof;
    const states = rows(q, COUNT, n).map((_, k) => ({
      q: Array.from(stateOf(q, k, n)),
      qd: Array.from(stateOf(qd, k, n)),
      tau: Array.from(stateOf(tau, k, n)),
    }));
    const saha = await runCli('fd', PANDA_HAND, states, ['--tip-link', PANDA_TIP]);
    const cholesky = await runCli('fd', PANDA_HAND, states, ['--tip-link', PANDA_TIP, '--route', 'cholesky']);
    const bySaha = await client.forwardDynamics(model.modelId, { q, qd, tau });
    assert.equal(bySaha.route, 'saha');
    const byCholesky = await client.forwardDynamics(model.modelId, { q, qd, tau, route: 'cholesky' });
    assert.equal(byCholesky.route, 'cholesky');
    const byFixman = await client.forwardDynamics(model.modelId, { q, qd, tau, route: 'fixman' });
    assert.equal(byFixman.route, 'fixman');
    // the Fixman route in-process, where the CLI has it; else the Saha route's answer to rounding
    let fixman: CliState[] | undefined;
    try {
      fixman = await runCli('fd', PANDA_HAND, states, ['--tip-link', PANDA_TIP, '--route', 'fixman']);
    } catch (e) {
      assert.match(String(e), /route/); // a CLI without the fixman route refuses the option
    }
    for (let k = 0; k < COUNT; k++) {
      expectClose(stateOf(bySaha.qdd, k, n), saha[k]!.qdd!, `saha qdd state ${k}`);
      expectClose(stateOf(byCholesky.qdd, k, n), cholesky[k]!.qdd!, `cholesky qdd state ${k}`);
      if (fixman !== undefined) expectClose(stateOf(byFixman.qdd, k, n), fixman[k]!.qdd!, `fixman qdd state ${k}`);
      else expectClose(stateOf(byFixman.qdd, k, n), saha[k]!.qdd!, `fixman qdd state ${k} (vs saha)`, 1e-9);
    }
  });

  it('fullFactor: I, U, D, log det and I^-1 of 100 states; flags give C, bias and g(q)', async () => {
    const n = model.dof;
    const want = await runCli('factor', PANDA_HAND, rows(q, COUNT, n).map((s) => ({ q: s })), [
      '--tip-link', PANDA_TIP, '--inverse',
    ]);
    const r = await client.fullFactor(model.modelId, { q, inverse: true });
    assert.equal(r.inertia.length, COUNT * n * n);
    assert.equal(r.u.length, COUNT * n * n);
    assert.equal(r.d.length, COUNT * n);
    assert.equal(r.logDet.length, COUNT);
    assert.equal(r.convective, undefined);
    for (let k = 0; k < COUNT; k++) {
      const w = want[k]!;
      expectClose(stateOf(r.inertia, k, n * n), w.I!.flat(), `I state ${k}`);
      expectClose(stateOf(r.u, k, n * n), w.U!.flat(), `U state ${k}`);
      expectClose(stateOf(r.d, k, n), w.D!, `D state ${k}`);
      expectClose([r.logDet[k]!], [w.log_det!], `log det state ${k}`);
      expectClose(stateOf(r.inverse!, k, n * n), w.I_inv!.flat(), `I^-1 state ${k}`);
    }
    // bias = ID(q, qd, 0) and g(q) = ID(q, 0, 0), computed by other routines: equal to rounding
    const flags = await client.fullFactor(model.modelId, { q, qd, convective: true, bias: true, gravityTorque: true });
    assert.equal(flags.convective!.length, COUNT * n * n);
    const zero = new Float64Array(COUNT * n);
    const bias = await client.inverseDynamics(model.modelId, { q, qd, qdd: zero });
    const gravity = await client.inverseDynamics(model.modelId, { q, qd: zero, qdd: zero });
    expectClose(flags.bias!, bias.tau, 'bias', 1e-10);
    expectClose(flags.gravityTorque!, gravity.tau, 'gravity torque', 1e-10);
    // C(q, qd) qd + g(q) = bias
    for (let k = 0; k < COUNT; k++) {
      const C = stateOf(flags.convective!, k, n * n);
      const v = stateOf(qd, k, n);
      const g = stateOf(flags.gravityTorque!, k, n);
      const Cqd = Array.from({ length: n }, (_, i) => g[i]! + v.reduce((s, x, j) => s + C[i * n + j]! * x, 0));
      expectClose(Cqd, stateOf(flags.bias!, k, n), `C qd + g state ${k}`, 1e-10);
    }
  });

  it('registerDH: the Stanford arm (Saha 1999 Table 3) equals the same model file in-process', async () => {
    const deg = Math.PI / 180;
    const link = (type: 'revolute' | 'prismatic', b: number, alpha: number, mass: number, com: number[], p: number[]): DHLink => ({
      type, a: 0, b, alpha: alpha * deg, theta: 0, mass, com, inertia: { ixx: p[0]!, iyy: p[1]!, izz: p[2]! },
    });
    const links: DHLink[] = [
      link('revolute', 0.2, -90, 9, [0, 0.1, 0], [0.01, 0.02, 0.01]),
      link('revolute', 0.1, 90, 6, [0, 0, 0], [0.05, 0.06, 0.01]),
      link('prismatic', 0, 0, 4, [0, 0, 0], [0.4, 0.4, 0.01]),
      link('revolute', 0.6, 90, 1, [0, -0.1, 0], [0.001, 0.001, 0.0005]),
      link('revolute', 0, -90, 0.6, [0, 0, 0], [0.0005, 0.0005, 0.0002]),
      link('revolute', 0, 0, 0.5, [0, 0, 0], [0.003, 0.001, 0.002]),
    ];
    const arm = await client.registerDH(links, { name: 'stanford_arm_node', gravity: [0, 0, -9.81] });
    assert.equal(arm.dof, 6);
    // the same table as denocd's built-in example: same content, same id (then its description is kept)
    assert.ok(arm.source === 'dh' || arm.source === 'builtin', arm.source);
    assert.deepEqual(arm.jointTypes, ['revolute', 'revolute', 'prismatic', 'revolute', 'revolute', 'revolute']);
    const n = 6;
    const r = rng(7);
    const aq = randomBatch(r, 20, n, -1, 1);
    const aqd = randomBatch(r, 20, n, -1, 1);
    const aqdd = randomBatch(r, 20, n, -1, 1);
    const got = await client.inverseDynamics(arm.modelId, { q: aq, qd: aqd, qdd: aqdd, count: 20 });
    const want = await runCli(
      'id',
      path.join(REPO_DIR, 'examples', 'models', 'stanford_arm.json'),
      rows(aq, 20, n).map((s, k) => ({ q: s, qd: rows(aqd, 20, n)[k], qdd: rows(aqdd, 20, n)[k] })),
    );
    for (let k = 0; k < 20; k++) expectClose(stateOf(got.tau, k, n), want[k]!.tau!, `stanford tau state ${k}`);
  });

  it('deleteModel removes the model and the client forgets its source (no re-registration)', async () => {
    const other = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), {
      tipLink: PANDA_TIP,
      gravity: { x: 0, y: 0, z: -9.80665 },
    });
    assert.notEqual(other.modelId, model.modelId); // gravity is part of the id
    assert.equal(await client.deleteModel(other.modelId), other.modelId);
    assert.equal(client.knowsSource(other.modelId), false);
    await assert.rejects(client.getModel(other.modelId), (e: unknown) => {
      assert.ok(e instanceof DenocError);
      assert.equal(e.code, Status.NOT_FOUND);
      return true;
    });
    assert.equal(client.reRegistrations, 0);
  });
});
