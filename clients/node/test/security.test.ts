// Transport security and access control against real denocd processes started with TLS, mutual TLS and a
// token file, with certificates made by openssl at test time (certs.ts): answers over TLS equal the C++ core
// in-process (the denoc tool); the server-name override is what lets a certificate for localhost pass at
// 127.0.0.1; a missing or foreign client certificate is an UnavailableError, a missing or unknown token an
// UnauthenticatedError, a deletion by another token a PermissionDeniedError.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';

import {
  DenocClient,
  DenocError,
  InvalidArgumentError,
  PermissionDeniedError,
  Status,
  UnauthenticatedError,
  UnavailableError,
  credentials,
  stateOf,
  type ClientOptions,
} from '../src/index';
import { makeCerts, type Certs } from './certs';
import {
  PACKAGE_DIR,
  PANDA_HAND,
  PANDA_TIP,
  REPO_DIR,
  cliPath,
  expectClose,
  randomBatch,
  rng,
  rows,
  runCli,
  startServer,
  tempDir,
  type CliState,
  type Server,
} from './support';

const STANFORD = path.join(REPO_DIR, 'examples', 'models', 'stanford_arm.json');
const TOKENS = '# test tokens\nalice token-of-alice\nbob token-of-bob\n';

/** Awaits p and returns what it rejected with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<DenocError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof DenocError, `expected a DenocError, got ${String(e)}`);
    return e;
  }
  assert.fail('the call succeeded');
}

describe('TLS, mutual TLS and bearer tokens', { timeout: 300_000 }, () => {
  let certs: Certs;
  let servers: Server[] = [];
  let clients: DenocClient[] = [];

  before(() => {
    certs = makeCerts(tempDir('certs'));
  });

  after(() => {
    fs.rmSync(certs.dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const c of clients) c.close();
    clients = [];
    for (const s of servers) await s.stop();
    servers = [];
  });

  async function server(args: string[]): Promise<Server> {
    const s = await startServer({ args });
    servers.push(s);
    return s;
  }

  const tlsArgs = (cert?: string, key?: string): string[] => [
    '--tls-cert', cert ?? certs.serverCert, '--tls-key', key ?? certs.serverKey,
  ];

  function client(address: string, options: ClientOptions): DenocClient {
    const c = new DenocClient(address, { timeoutMs: 20_000, ...options });
    clients.push(c);
    return c;
  }

  const trusting = (address: string, extra: Record<string, unknown> = {}): DenocClient =>
    client(address, { tls: { rootCerts: certs.ca, ...extra } });

  const mutual = (address: string, token?: string): DenocClient =>
    client(address, {
      tls: { rootCerts: certs.ca, certChain: certs.clientCert, privateKey: certs.clientKey },
      ...(token === undefined ? {} : { token }),
    });

  async function tokenServer(): Promise<Server> {
    const dir = tempDir('tokens');
    const file = path.join(dir, 'tokens');
    fs.writeFileSync(file, TOKENS);
    const s = await server([...tlsArgs(), '--tls-client-ca', certs.ca, '--token-file', file]);
    const stop = s.stop.bind(s);
    s.stop = async () => {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    };
    return s;
  }

  it('over TLS every call equals the core (unary, simulate, stream)', async () => {
    const s = await server(tlsArgs());
    const c = trusting(s.address);
    const panda = await c.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
    const n = panda.dof;
    const count = 20;
    const random = rng(77);
    const q = randomBatch(random, count, n, -2, 2);
    const qd = randomBatch(random, count, n, -1, 1);
    const qdd = randomBatch(random, count, n, -3, 3);
    const tau = randomBatch(random, count, n, -20, 20);
    const states = (extra: { qd?: Float64Array; qdd?: Float64Array; tau?: Float64Array }): CliState[] =>
      rows(q, count, n).map((row, k) => {
        const out: CliState = { q: row };
        if (extra.qd) out.qd = Array.from(stateOf(extra.qd, k, n));
        if (extra.qdd) out.qdd = Array.from(stateOf(extra.qdd, k, n));
        if (extra.tau) out.tau = Array.from(stateOf(extra.tau, k, n));
        return out;
      });

    const id = await c.inverseDynamics(panda.modelId, { q, qd, qdd });
    const wantId = await runCli('id', PANDA_HAND, states({ qd, qdd }), ['--tip-link', PANDA_TIP]);
    for (let k = 0; k < count; k++) expectClose(stateOf(id.tau, k, n), wantId[k]!.tau!, `tau ${k}`);
    const fd = await c.forwardDynamics(panda.modelId, { q, qd, tau });
    const wantFd = await runCli('fd', PANDA_HAND, states({ qd, tau }), ['--tip-link', PANDA_TIP]);
    for (let k = 0; k < count; k++) expectClose(stateOf(fd.qdd, k, n), wantFd[k]!.qdd!, `qdd ${k}`);
    const factor = await c.fullFactor(panda.modelId, { q });
    const wantFactor = await runCli('factor', PANDA_HAND, states({}), ['--tip-link', PANDA_TIP]);
    for (let k = 0; k < count; k++) {
      expectClose(stateOf(factor.inertia, k, n * n), wantFactor[k]!.I!.flat(), `I ${k}`);
      expectClose([factor.logDet[k]!], [wantFactor[k]!.log_det!], `log det ${k}`);
    }

    // a Stream session over the same channel
    const session = c.openStream();
    for (let k = 0; k < 4; k++) {
      const a = await session.inverseDynamics(panda.modelId, stateOf(q, k, n), stateOf(qd, k, n), stateOf(qdd, k, n));
      expectClose(a.result, wantId[k]!.tau!, `streamed tau ${k}`);
    }
    await session.close();

    // a streamed simulation of the built-in Stanford arm, against the tool's local run of its model file
    const arm = await c.listModels().then((ms) => ms.find((m) => m.name === 'stanford_arm')!);
    assert.ok(arm !== undefined, 'the built-in stanford_arm');
    const q0 = [0.1, 1.2, 0.05, -0.4, 0.3, 0.2];
    const run = await c.simulateAll(arm.modelId, { q0, qd0: new Float64Array(6), tEnd: 0.2, dtOut: 0.01 });
    const csv = await new Promise<string>((resolve, reject) => {
      execFile(
        cliPath(),
        ['simulate', STANFORD, '--t-end', '0.2', '--dt-out', '0.01', `--q0=${q0.join(',')}`, '--no-progress'],
        { timeout: 60_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
    const lines = csv.trim().split('\n').slice(1).map((l) => l.split(',').map(Number));
    assert.equal(run.count, lines.length);
    for (let k = 0; k < lines.length; k++) {
      expectClose([run.t[k]!], [lines[k]![0]!], `t ${k}`);
      expectClose(stateOf(run.q, k, 6), lines[k]!.slice(1, 7), `q ${k}`);
      expectClose(stateOf(run.qd, k, 6), lines[k]!.slice(7, 13), `qd ${k}`);
    }
  });

  it('a TLS server refuses plaintext and an untrusted certificate; the CA may be a path, PEM text or a Buffer', async () => {
    const s = await server(tlsArgs());
    const plain = client(s.address, {});
    assert.ok((await rejection(plain.listModels())) instanceof UnavailableError);
    const foreign = trusting(s.address, { rootCerts: certs.otherCa });
    const e = await rejection(foreign.listModels());
    assert.ok(e instanceof UnavailableError, `${e.name}: ${e.message}`);
    assert.equal(e.code, Status.UNAVAILABLE);
    for (const rootCerts of [certs.ca, fs.readFileSync(certs.ca, 'utf8'), fs.readFileSync(certs.ca)]) {
      const ok = client(s.address, { tls: { rootCerts } });
      assert.ok((await ok.listModels()).some((m) => m.name === 'stanford_arm'));
    }
  });

  it('the server-name override accepts a certificate for localhost at 127.0.0.1', async () => {
    const s = await server(tlsArgs(certs.dnsOnlyCert, certs.dnsOnlyKey)); // DNS:localhost only
    const e = await rejection(trusting(s.address).listModels());
    assert.ok(e instanceof UnavailableError, `a certificate without 127.0.0.1 was accepted: ${e.message}`);
    const named = trusting(s.address, { serverName: 'localhost' });
    assert.ok((await named.listModels()).some((m) => m.name === 'stanford_arm'));
    const wrong = await rejection(trusting(s.address, { serverName: 'denoc.invalid' }).listModels());
    assert.ok(wrong instanceof UnavailableError, `a name the certificate does not carry was accepted: ${wrong.message}`);
  });

  it('mutual TLS needs a client certificate from the server CA', async () => {
    const s = await server([...tlsArgs(), '--tls-client-ca', certs.ca]);
    const good = mutual(s.address);
    const q = Float64Array.from([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
    const qd = Float64Array.from([0.6, 0.5, 0.4, 0.3, 0.2, 0.1]);
    const qdd = Float64Array.from([1, -1, 1, -1, 1, -1]);
    const arm = (await good.listModels()).find((m) => m.name === 'stanford_arm')!;
    const got = await good.inverseDynamics(arm.modelId, { q, qd, qdd });
    const want = await runCli('id', STANFORD, [{ q: Array.from(q), qd: Array.from(qd), qdd: Array.from(qdd) }]);
    expectClose(got.tau, want[0]!.tau!, 'tau over mutual TLS');

    const none = trusting(s.address); // no client certificate
    assert.ok((await rejection(none.listModels())) instanceof UnavailableError);
    assert.ok((await rejection(none.inverseDynamics(arm.modelId, { q, qd, qdd, dof: 6 }))) instanceof UnavailableError);
    const other = client(s.address, {
      tls: { rootCerts: certs.ca, certChain: certs.otherCert, privateKey: certs.otherKey },
    });
    assert.ok((await rejection(other.listModels())) instanceof UnavailableError);

    // the client checks its own material before connecting
    assert.throws(
      () => new DenocClient(s.address, { tls: { rootCerts: certs.ca, certChain: certs.clientCert } }),
      (e: unknown) => e instanceof InvalidArgumentError && /certChain and tls.privateKey/.test(e.details),
    );
    assert.throws(
      () => new DenocClient(s.address, { tls: true, credentials: credentials.createInsecure() }),
      (e: unknown) => e instanceof InvalidArgumentError && /not both/.test(e.details),
    );
    assert.throws(() => new DenocClient(s.address, { tls: { rootCerts: path.join(certs.dir, 'no-such.pem') } }), /ENOENT/);
  });

  it('without a known token every call is UNAUTHENTICATED', async () => {
    const s = await tokenServer();
    const alice = mutual(s.address, 'token-of-alice');
    const panda = await alice.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
    const z = new Float64Array(7);
    for (const token of [undefined, '', 'token-of-mallory', 'token-of-alic']) {
      const c = mutual(s.address, token);
      const calls: Record<string, () => Promise<unknown>> = {
        list: () => c.listModels(),
        register: () => c.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP }),
        get: () => c.getModel(panda.modelId),
        id: () => c.inverseDynamics(panda.modelId, { q: z, qd: z, qdd: z, dof: 7 }),
        fd: () => c.forwardDynamics(panda.modelId, { q: z, qd: z, tau: z, dof: 7 }),
        factor: () => c.fullFactor(panda.modelId, { q: z, dof: 7 }),
        simulate: () => c.simulateAll(panda.modelId, { q0: z, qd0: z, tEnd: 0.05 }),
        stream: async () => {
          const session = c.openStream();
          try {
            await session.inverseDynamics(panda.modelId, z, z, z);
          } finally {
            await session.close().catch(() => undefined);
          }
        },
        delete: () => c.deleteModel(panda.modelId),
      };
      for (const [name, call] of Object.entries(calls)) {
        const e = await rejection(call());
        assert.ok(e instanceof UnauthenticatedError, `${String(token)} ${name}: ${e.name} ${e.message}`);
        assert.equal(e.code, Status.UNAUTHENTICATED);
        assert.equal(e.name, 'UnauthenticatedError');
        assert.ok(e.details.length > 0);
        if (token) assert.ok(!e.details.includes(token), 'the token was echoed');
      }
    }
    assert.equal((await alice.getModel(panda.modelId)).modelId, panda.modelId); // still there
  });

  it('models are shared, but only the owner deletes', async () => {
    const s = await tokenServer();
    const alice = mutual(s.address, 'token-of-alice');
    const bob = mutual(s.address, 'token-of-bob');
    const urdf = fs.readFileSync(PANDA_HAND, 'utf8');
    const panda = await alice.registerUrdf(urdf, { tipLink: PANDA_TIP });
    assert.equal(panda.created, true);

    const random = rng(91);
    const q = randomBatch(random, 5, 7, -2, 2);
    const qd = randomBatch(random, 5, 7, -1, 1);
    const qdd = randomBatch(random, 5, 7, -3, 3);
    const got = await bob.inverseDynamics(panda.modelId, { q, qd, qdd });
    const want = await runCli(
      'id',
      PANDA_HAND,
      rows(q, 5, 7).map((row, k) => ({ q: row, qd: Array.from(stateOf(qd, k, 7)), qdd: Array.from(stateOf(qdd, k, 7)) })),
      ['--tip-link', PANDA_TIP],
    );
    for (let k = 0; k < 5; k++) expectClose(stateOf(got.tau, k, 7), want[k]!.tau!, `tau for bob ${k}`);
    const again = await bob.registerUrdf(urdf, { tipLink: PANDA_TIP });
    assert.equal(again.modelId, panda.modelId);
    assert.equal(again.created, false);

    const denied = await rejection(bob.deleteModel(panda.modelId));
    assert.ok(denied instanceof PermissionDeniedError, `${denied.name}: ${denied.message}`);
    assert.equal(denied.code, Status.PERMISSION_DENIED);
    assert.match(denied.details, /another token/);
    assert.ok(bob.knowsSource(panda.modelId), 'a refused deletion keeps the source');
    assert.equal((await alice.getModel(panda.modelId)).modelId, panda.modelId);

    assert.equal(await alice.deleteModel(panda.modelId), panda.modelId);
    assert.ok(!alice.knowsSource(panda.modelId));
    assert.equal((await rejection(alice.getModel(panda.modelId))).code, Status.NOT_FOUND);
  });

  it('the README TLS example runs as written', async () => {
    // a server whose certificate names localhost only, with mutual TLS and tokens; the example runs in the
    // folder of the PEM files (ca.pem, client.pem, client.key) and imports 'denoc' from this package
    const dir = tempDir('readme-tls');
    const file = path.join(dir, 'tokens');
    fs.writeFileSync(file, TOKENS);
    const named = await server([
      ...tlsArgs(certs.dnsOnlyCert, certs.dnsOnlyKey), '--tls-client-ca', certs.ca, '--token-file', file,
    ]);
    const readme = fs.readFileSync(path.join(PACKAGE_DIR, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## TLS and tokens'));
    const code = /```javascript\n([\s\S]*?)```/.exec(section)![1]!;
    const script = path.join(PACKAGE_DIR, 'dist', 'readme-tls-example.mjs');
    fs.writeFileSync(script, code);
    const runExample = (token: string): Promise<{ ok: boolean; out: string; err: string }> =>
      new Promise((resolve) => {
        execFile(
          process.execPath,
          [script],
          { cwd: certs.dir, env: { ...process.env, DENOC_SERVER: named.address, DENOC_TOKEN: token }, timeout: 60_000 },
          (err, stdout, stderr) => resolve({ ok: err === null, out: stdout, err: stderr }),
        );
      });
    try {
      const good = await runExample('token-of-bob');
      assert.ok(good.ok, good.err);
      assert.match(good.out, /stanford_arm/);
      const bad = await runExample('token-of-mallory');
      assert.ok(!bad.ok);
      assert.match(bad.err, /UnauthenticatedError/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a token must be visible ASCII', () => {
    for (const token of ['two words', 'line\nbreak', 'tab\t', 'nul\0x', 'caf\u00e9']) {
      assert.throws(
        () => new DenocClient('127.0.0.1:1', { token }),
        (e: unknown) => e instanceof InvalidArgumentError && /token/.test(e.details) && !e.details.includes(token),
        JSON.stringify(token),
      );
    }
  });
});
