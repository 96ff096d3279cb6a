// The fleet scenario of tests/front/test_fleet_client.cpp with the Node client: three denocd replicas sharing
// one store, each behind its own front, and the L7 balancer over them (test/fleet.ts), all real processes;
// skipped without Debian's nginx. A model registered through the balancer is listed by every replica (asked
// on its socket); deleted on one, every replica answers NOT_FOUND "was deleted"; registrations racing
// deletions on other replicas leave every replica's listing equal to the store directory. A client calling
// inverse dynamics throughout (each answer checked against the denoc tool's, the core in its own process) has
// no failed call while a replica is killed and started again (the client's retries counted); a replica added
// to a balancer gets calls after the reload; calls spread over the three replicas. The figures are printed.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { DenocClient, DenocError, Status, wasDeleted } from '../src/index';
import { Fleet, NGINX } from './fleet';
import { PANDA_HAND, PANDA_TIP, expectClose, randomBatch, rng, rows, runCli } from './support';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const PANDA = fs.readFileSync(PANDA_HAND, 'utf8');

/** The unpinned models replica r lists. */
async function listed(fleet: Fleet, r: number): Promise<string[]> {
  const c = fleet.direct(r);
  try {
    return (await c.listModels()).filter((m) => !m.pinned).map((m) => m.modelId).sort();
  } finally {
    c.close();
  }
}

/** The models the store directory holds records of. */
function onDisk(fleet: Fleet): string[] {
  return fs.readdirSync(path.join(fleet.store, 'v1')).filter((f) => /^[0-9a-f]{64}\.pb$/.test(f)).map((f) => f.slice(0, 64)).sort();
}

async function eventually(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return true;
    await sleep(5);
  }
  return cond();
}

/** A client calling inverse dynamics on the Panda every 5 ms until stopped, each answer checked against the CLI's. */
class Caller {
  calls = 0;
  failed = 0;
  wrong = 0;
  slowestMs = 0;
  firstFailure = '';
  private done = false;
  private running: Promise<void> = Promise.resolve();

  private constructor(
    private readonly client: DenocClient,
    private readonly id: string,
    private readonly states: { q: number[]; qd: number[]; qdd: number[] }[],
    private readonly tau: number[][],
  ) {}

  static async start(client: DenocClient): Promise<Caller> {
    const model = await client.registerUrdf(PANDA, { tipLink: PANDA_TIP });
    const n = model.dof, count = 16, random = rng(7);
    const [q, qd, qdd] = [randomBatch(random, count, n, -1, 1), randomBatch(random, count, n, -1, 1), randomBatch(random, count, n, -1, 1)];
    const states = rows(q, count, n).map((s, k) => ({ q: s, qd: rows(qd, count, n)[k]!, qdd: rows(qdd, count, n)[k]! }));
    const want = await runCli('id', PANDA_HAND, states, ['--tip-link', PANDA_TIP]);
    const c = new Caller(client, model.modelId, states, want.map((s) => s.tau ?? []));
    c.running = c.run();
    return c;
  }

  async stop(): Promise<void> {
    this.done = true;
    await this.running;
  }

  private async run(): Promise<void> {
    for (let k = 0; !this.done; k++) {
      const i = k % this.states.length;
      const t0 = Date.now();
      try {
        const r = await this.client.inverseDynamics(this.id, this.states[i]!);
        try {
          expectClose(r.tau, this.tau[i]!, 'tau');
        } catch {
          this.wrong++;
        }
      } catch (e) {
        if (this.failed++ === 0) this.firstFailure = String(e);
      }
      this.slowestMs = Math.max(this.slowestMs, Date.now() - t0);
      this.calls++;
      await sleep(5);
    }
  }
}

describe('a fleet behind the L7 balancer', { skip: fs.existsSync(NGINX) ? false : `${NGINX} not found` }, () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await Fleet.start();
  });
  after(async () => {
    await fleet?.stop();
  });

  it('every replica sees the registration, the deletion and, after races, the store', async () => {
    const robot = fleet.robot(fleet.balancerPort);
    const replicas = [0, 1, 2].map((r) => fleet.direct(r));
    try {
      const { modelId } = await robot.registerUrdf(PANDA, { tipLink: 'panda_link3' });
      for (let r = 0; r < Fleet.REPLICAS; r++) assert.ok((await listed(fleet, r)).includes(modelId), `replica ${r}`);

      // deleted on replica 0: every replica answers NOT_FOUND "was deleted"
      const deleted = Date.now();
      await replicas[0]!.deleteModel(modelId);
      let seen = 0;
      for (let r = 0; r < Fleet.REPLICAS; r++) {
        let message = '';
        const gone = await eventually(async () => {
          try {
            await replicas[r]!.getModel(modelId);
            return false;
          } catch (e) {
            message = e instanceof DenocError ? e.details : String(e);
            return e instanceof DenocError && e.code === Status.NOT_FOUND;
          }
        });
        seen = Math.max(seen, (Date.now() - deleted) / 1000);
        assert.ok(gone, `replica ${r} still serves the deleted model`);
        assert.ok(wasDeleted(message), `replica ${r}: ${message}`);
      }
      console.log(`[ figures  ] Node client: a deletion on one replica was seen by all three after ${seen.toFixed(3)} s`);

      // a registration on one replica racing a deletion on another, round after round
      const rounds = 30;
      const tips = ['panda_link4', 'panda_link5', 'panda_link6', 'panda_link7'];
      for (let round = 0; round < rounds; round++) {
        const tip = tips[round % tips.length]!;
        const id = (await robot.registerUrdf(PANDA, { tipLink: tip })).modelId;
        await Promise.all([
          replicas[round % 3]!.registerUrdf(PANDA, { tipLink: tip }),
          replicas[(round + 1) % 3]!.deleteModel(id).catch((e: unknown) => {
            assert.ok(e instanceof DenocError && e.code === Status.NOT_FOUND, String(e)); // deleted in an earlier round
          }),
        ]);
      }
      const raced = Date.now();
      const disk = onDisk(fleet);
      for (let r = 0; r < Fleet.REPLICAS; r++) {
        assert.ok(await eventually(async () => (await listed(fleet, r)).join() === disk.join()), `replica ${r}`);
      }
      console.log(
        `[ figures  ] Node client: after ${rounds} rounds of a registration racing a deletion, every replica listed ` +
          `the store's ${disk.length} models within ${((Date.now() - raced) / 1000).toFixed(3)} s`,
      );
    } finally {
      robot.close();
      for (const c of replicas) c.close();
    }
  });

  it('no call fails while a replica is killed and started again', async () => {
    const robot = fleet.robot(fleet.balancerPort);
    try {
      const caller = await Caller.start(robot);
      await sleep(1000);
      const killed = Date.now();
      await fleet.killReplica(1);
      await sleep(500);
      await fleet.startReplica(1);
      const down = (Date.now() - killed) / 1000;
      const back = Date.now();
      const firstCall = await fleet.secondsUntilCalled(1, fleet.perReplica()[1]!, back);
      await sleep(1000);
      await caller.stop();
      console.log(
        `[ figures  ] Node client: ${caller.calls} calls, replica 1 down ${down.toFixed(2)} s, ${robot.retries} retries, ` +
          `${caller.failed} failed, ${caller.wrong} wrong, slowest ${caller.slowestMs} ms; the restarted replica's ` +
          `first call ${firstCall.toFixed(2)} s after it was back`,
      );
      assert.equal(caller.failed, 0, caller.firstFailure);
      assert.equal(caller.wrong, 0);
      assert.ok(firstCall >= 0, 'the restarted replica got no call within 30 s');
    } finally {
      robot.close();
    }
  });

  it('a replica added to a balancer gets calls without a failed call', async () => {
    const port = await fleet.startBalancer('scaled', 2);
    const robot = fleet.robot(port);
    try {
      const caller = await Caller.start(robot);
      await sleep(500);
      const on2 = fleet.perReplica()[2]!;
      const reloaded = fleet.scaleBalancer('scaled', port, 3);
      const firstCall = await fleet.secondsUntilCalled(2, on2, reloaded);
      await sleep(1000);
      await caller.stop();
      console.log(
        `[ figures  ] Node client: the third replica's first call ${firstCall.toFixed(2)} s after the balancer's ` +
          `reload; ${caller.calls} calls, ${caller.failed} failed`,
      );
      assert.ok(firstCall >= 0, 'the added replica got no call within 30 s');
      assert.equal(caller.failed, 0, caller.firstFailure);
      assert.equal(caller.wrong, 0);
    } finally {
      robot.close();
    }
  });

  it('calls spread over every replica', async () => {
    const robot = fleet.robot(fleet.balancerPort);
    try {
      const arm = await robot.findModel('planar_3r');
      const input = { q: [0.2, 0.2, 0.2], qd: [0, 0, 0], qdd: [0, 0, 0] };
      await robot.inverseDynamics(arm.modelId, input);
      const before = await fleet.settledPerReplica();
      const calls = 90;
      for (let k = 0; k < calls; k++) await robot.inverseDynamics(arm.modelId, input);
      const spread = (await fleet.settledPerReplica()).map((n, r) => n - before[r]!);
      console.log(`[ figures  ] Node client: ${calls} calls through the balancer: ${spread.join(', ')} on replicas 0, 1, 2`);
      assert.equal(spread.reduce((a, b) => a + b, 0), calls, String(spread));
      for (const n of spread) assert.ok(n >= calls / 5, `each replica at least a fifth: ${spread}`);
    } finally {
      robot.close();
    }
  });
});
