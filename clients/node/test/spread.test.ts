// Calls spread over a fleet by default: three denocd replicas sharing one store behind one ipv4: target. With
// no channel option the client uses round_robin for such a target (each replica answers some of 30 calls,
// counted by its own metrics); with grpc.lb_policy_name pick_first every call goes to one replica.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { DenocClient } from '../src/index';
import { calls, startServer, tempDir, type Server } from './support';

describe('calls over a fleet', () => {
  it('spread over every replica by default, to one with pick_first', async () => {
    const dir = tempDir('spread');
    const store = path.join(dir, 'store');
    const servers: Server[] = [];
    const metrics: number[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const portFile = path.join(dir, `metrics${i}`);
        servers.push(
          await startServer({ storeDir: store, args: ['--metrics-listen', '127.0.0.1:0', '--metrics-port-file', portFile] }),
        );
        metrics.push(Number(fs.readFileSync(portFile, 'utf8').trim()));
      }
      const target = 'ipv4:' + servers.map((s) => s.address).join(',');
      const cases: [Record<string, string>, number][] = [
        [{}, 3],
        [{ 'grpc.lb_policy_name': 'pick_first' }, 1],
      ];
      for (const [channelOptions, spreadOver] of cases) {
        const client = new DenocClient(target, { channelOptions });
        try {
          const arm = (await client.listModels()).find((m) => m.name === 'planar_3r');
          assert.ok(arm);
          const before = await Promise.all(metrics.map((p) => calls(p, 'InverseDynamics')));
          const q = Float64Array.from([0.2, 0.2, 0.2]), zero = new Float64Array(3);
          for (let k = 0; k < 30; k++) await client.inverseDynamics(arm.modelId, { q, qd: zero, qdd: zero });
          const after = await Promise.all(metrics.map((p) => calls(p, 'InverseDynamics')));
          const spread = after.map((a, i) => a - before[i]!);
          assert.equal(spread.reduce((x, y) => x + y, 0), 30, String(spread));
          assert.equal(spread.filter((c) => c > 0).length, spreadOver, `${JSON.stringify(channelOptions)}: ${spread}`);
        } finally {
          client.close();
        }
      }
    } finally {
      for (const s of servers) await s.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
