// Server-streamed simulation (received in order and complete) and the bidirectional stream session.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { DenocClient, stateOf, type RegisteredModel, type SimulationBatch } from '../src/index';
import { PANDA_HAND, PANDA_TIP, expectClose, randomBatch, rng, startServer, type Server } from './support';

describe('simulate and stream sessions', { timeout: 120_000 }, () => {
  let server: Server;
  let client: DenocClient;
  let model: RegisteredModel;
  const q0 = Float64Array.from([0, -0.5, 0, -2, 0, 1.5, 0.8]);
  const qd0 = new Float64Array(7);

  before(async () => {
    server = await startServer();
    client = new DenocClient(server.address);
    model = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('simulate: 201 samples of a 2 s free fall arrive in batches, in order and complete', async () => {
    const batches: SimulationBatch[] = [];
    for await (const b of client.simulate(model.modelId, { q0, qd0, tEnd: 2, dtOut: 0.01, batchSize: 16, rtol: 1e-10, atol: 1e-12 })) {
      batches.push(b);
    }
    assert.equal(batches.length, Math.ceil(201 / 16));
    let k = 0;
    for (const [i, b] of batches.entries()) {
      assert.equal(b.dof, 7);
      assert.equal(b.count, i < batches.length - 1 ? 16 : 201 - 16 * (batches.length - 1));
      assert.equal(b.t.length, b.count);
      assert.equal(b.q.length, b.count * 7);
      assert.equal(b.qd.length, b.count * 7);
      assert.equal(b.energy.length, b.count);
      assert.equal(b.last, i === batches.length - 1);
      for (const t of b.t) {
        expectClose([t], [k * 0.01], `t of sample ${k}`, 1e-12);
        k++;
      }
    }
    assert.equal(k, 201);
    const last = batches[batches.length - 1]!;
    assert.ok(last.steps > 0 && last.evaluations > last.steps);
    // the first sample is the initial state; energy is conserved (no torque, no damping, tight tolerance)
    expectClose(batches[0]!.q.subarray(0, 7), q0, 'q at t = 0', 0);
    const e0 = batches[0]!.energy[0]!;
    for (const b of batches) for (const e of b.energy) assert.ok(Math.abs(e - e0) <= 1e-6 * Math.max(1, Math.abs(e0)), `energy ${e} vs ${e0}`);
    // simulateAll concatenates the same run
    const all = await client.simulateAll(model.modelId, { q0, qd0, tEnd: 2, dtOut: 0.01, batchSize: 16, rtol: 1e-10, atol: 1e-12 });
    assert.equal(all.count, 201);
    assert.equal(all.last, true);
    expectClose(all.q, Float64Array.from(batches.flatMap((b) => Array.from(b.q))), 'simulateAll q', 0);
  });

  it('simulate: RK4 with a constant torque and damping, sample times given', async () => {
    const times = [0, 0.1, 0.25, 0.5];
    const all = await client.simulateAll(model.modelId, {
      q0, qd0, tEnd: 0.5, integrator: 'rk4', step: 1e-3, sampleTimes: times,
      torqueValues: [1, 2, 3, 4, 0.5, 0.5, 0.1], damping: Array(7).fill(0.5), route: 'cholesky',
    });
    assert.deepEqual(Array.from(all.t), times);
    assert.equal(all.q.length, 4 * 7);
    assert.ok(all.steps >= 500);
  });

  it('simulate: leaving the loop early cancels the run; the server goes on serving', async () => {
    let seen = 0;
    for await (const b of client.simulate(model.modelId, { q0, qd0, tEnd: 500, dtOut: 0.01, batchSize: 8 })) {
      seen += b.count;
      if (seen >= 24) break;
    }
    assert.equal(seen, 24);
    const info = await client.getModel(model.modelId);
    assert.equal(info.modelId, model.modelId);
  });

  it('stream session: 60 pipelined ID and FD messages answered in order, equal to the batch calls', async () => {
    const r = rng(11);
    const count = 30;
    const q = randomBatch(r, count, 7, -2, 2);
    const qd = randomBatch(r, count, 7, -1, 1);
    const x = randomBatch(r, count, 7, -3, 3);
    const id = await client.inverseDynamics(model.modelId, { q, qd, qdd: x });
    const fd = await client.forwardDynamics(model.modelId, { q, qd, tau: x, route: 'cholesky' });
    const session = client.openStream();
    const answers = [];
    for (let k = 0; k < count; k++) {
      answers.push(session.inverseDynamics(model.modelId, stateOf(q, k, 7), stateOf(qd, k, 7), stateOf(x, k, 7)));
      answers.push(session.forwardDynamics(model.modelId, stateOf(q, k, 7), stateOf(qd, k, 7), stateOf(x, k, 7), 'cholesky'));
    }
    const got = await Promise.all(answers);
    await session.close();
    assert.equal(session.inFlight, 0);
    for (let k = 0; k < count; k++) {
      const a = got[2 * k]!;
      const b = got[2 * k + 1]!;
      assert.equal(a.sequence, 2 * k);
      assert.equal(b.sequence, 2 * k + 1);
      assert.equal(a.computation, 'inverse');
      assert.equal(b.computation, 'forward');
      expectClose(a.result, stateOf(id.tau, k, 7), `stream tau ${k}`, 1e-12);
      expectClose(b.result, stateOf(fd.qdd, k, 7), `stream qdd ${k}`, 1e-12);
    }
    await assert.rejects(session.inverseDynamics(model.modelId, q.subarray(0, 7), qd.subarray(0, 7), x.subarray(0, 7)), /closed/);
  });
});
