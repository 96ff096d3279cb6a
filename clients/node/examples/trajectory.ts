// A planner-style use of the service: evaluate a whole joint trajectory of the Panda in one batched inverse
// dynamics call, check the torques against the effort limits, check forward dynamics gives the
// accelerations back, then let the arm fall for half a second and watch the energy.
//
//   npm run build && node dist/examples/trajectory.js [SERVER] [URDF]
//
// SERVER defaults to $DENOC_SERVER or 127.0.0.1:50051; URDF to the repository's examples/models/panda.urdf.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { DenocClient, stateOf } from '../src/index';

async function main(): Promise<void> {
  const server = process.argv[2] ?? process.env.DENOC_SERVER ?? '127.0.0.1:50051';
  const urdf = process.argv[3] ?? path.resolve(__dirname, '..', '..', '..', '..', 'examples', 'models', 'panda.urdf');
  const client = new DenocClient(server);
  try {
    const panda = await client.registerUrdf(fs.readFileSync(urdf, 'utf8'));
    const n = panda.dof;
    console.log(`model ${panda.name}: ${n} joints, id ${panda.modelId.slice(0, 12)}...`);

    // a 2 s rest-to-rest move of every joint (cycloidal profile), sampled at 100 Hz: 201 states
    const count = 201;
    const T = 2;
    const start = [0, -0.8, 0, -2.4, 0, 1.6, 0.8];
    const goal = [0.8, 0.2, -0.5, -1.2, 0.4, 2.2, -0.4];
    const q = new Float64Array(count * n);
    const qd = new Float64Array(count * n);
    const qdd = new Float64Array(count * n);
    for (let k = 0; k < count; k++) {
      const s = k / (count - 1);
      const w = (2 * Math.PI) / T;
      for (let j = 0; j < n; j++) {
        const d = goal[j]! - start[j]!;
        q[k * n + j] = start[j]! + d * (s - Math.sin(2 * Math.PI * s) / (2 * Math.PI));
        qd[k * n + j] = (d / T) * (1 - Math.cos(2 * Math.PI * s));
        qdd[k * n + j] = (d / T) * w * Math.sin(2 * Math.PI * s);
      }
    }
    const id = await client.inverseDynamics(panda.modelId, { q, qd, qdd });
    console.log(`inverse dynamics of ${id.count} states in one call (server compute ${(id.computeTimeNs / 1e3).toFixed(0)} us)`);
    const peak = new Float64Array(n);
    for (let k = 0; k < count; k++) {
      const tau = stateOf(id.tau, k, n);
      for (let j = 0; j < n; j++) peak[j] = Math.max(peak[j]!, Math.abs(tau[j]!));
    }
    for (let j = 0; j < n; j++) {
      const limit = panda.effortLimit[j]!;
      const use = (100 * peak[j]!) / limit;
      console.log(`  ${panda.jointNames[j]}: peak |tau| ${peak[j]!.toFixed(2).padStart(6)} N m of ${limit} (${use.toFixed(0)}%)`);
    }

    const fd = await client.forwardDynamics(panda.modelId, { q, qd, tau: id.tau });
    let err = 0;
    for (let i = 0; i < fd.qdd.length; i++) err = Math.max(err, Math.abs(fd.qdd[i]! - qdd[i]!));
    console.log(`forward dynamics of those torques gives qdd back: max |error| ${err.toExponential(1)} rad/s^2`);

    const fall = await client.simulateAll(panda.modelId, {
      q0: q.subarray(0, n),
      qd0: new Float64Array(n),
      tEnd: 0.5,
      dtOut: 0.1,
      rtol: 1e-10,
      atol: 1e-12,
    });
    const e0 = fall.energy[0]!;
    const drift = Math.max(...Array.from(fall.energy, (e) => Math.abs(e - e0)));
    console.log(`free fall for 0.5 s: ${fall.count} samples, ${fall.steps} steps, energy drift ${drift.toExponential(1)} J`);
  } finally {
    client.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
