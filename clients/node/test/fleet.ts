// Test support for a fleet behind the L7 balancer (as tests/front/fleet_process.hpp for C++): three denocd
// replicas sharing one store, each on a unix socket behind its own front (deploy/nginx/denoc.conf), and the
// balancer (deploy/nginx/balancer.conf) over the fronts, nginx configured by deploy/nginx/render.sh and run by
// deploy/nginx/front.sh, with certificates made by deploy/gen-certs.sh. Every process is killed with the fleet.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

import { DenocClient, type ClientOptions } from '../src/index';
import { REPO_DIR, denocdPath, tempDir } from './support';

/** Debian's nginx, which the fleet tests need (skipped without it). */
export const NGINX = '/usr/sbin/nginx';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A free TCP port on 127.0.0.1 (another process could take it meanwhile). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** A process in a group of its own (nginx's master and workers die with it), its output into `log`. */
function start(command: string, args: string[], log: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const out = fs.openSync(log, 'a');
  const child = spawn(command, args, { stdio: ['ignore', out, out], detached: true, env });
  fs.closeSync(out);
  return child;
}

function killGroup(child: ChildProcess | undefined): Promise<void> {
  if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    return Promise.resolve(); // already gone
  }
  return gone;
}

export class Fleet {
  static readonly REPLICAS = 3;
  readonly dir = tempDir('fleet');
  readonly store = path.join(this.dir, 'store');
  readonly certs = path.join(this.dir, 'certs');
  readonly frontPorts: number[] = [];
  balancerPort = 0;
  private readonly replicas: (ChildProcess | undefined)[] = [];
  private readonly fronts = new Map<string, ChildProcess>();

  /** Certificates, the replicas and their fronts, and a balancer over all of them (balancerPort). */
  static async start(): Promise<Fleet> {
    const f = new Fleet();
    try {
      execFileSync('bash', [path.join(REPO_DIR, 'deploy', 'gen-certs.sh'), f.certs], { stdio: 'pipe' });
      for (let r = 0; r < Fleet.REPLICAS; r++) {
        await f.startReplica(r);
        const port = await freePort();
        f.frontPorts.push(port);
        await f.front(`replica${r}-front`, port, ['--socket', f.socket(r)]);
      }
      f.balancerPort = await f.startBalancer('balancer', Fleet.REPLICAS);
    } catch (e) {
      await f.stop();
      throw e;
    }
    return f;
  }

  socket(r: number): string {
    return path.join(this.dir, `replica${r}.sock`);
  }

  /** Client options for a robot through a front or balancer: mutual TLS with the client certificate. */
  robotOptions(extra: ClientOptions = {}): ClientOptions {
    const at = (f: string): string => path.join(this.certs, f);
    return {
      ...extra,
      tls: { rootCerts: at('ca.crt'), certChain: at('client.crt'), privateKey: at('client.key'), serverName: 'localhost' },
    };
  }
  /** A robot's client through the balancer on `port`. */
  robot(port: number, extra: ClientOptions = {}): DenocClient {
    return new DenocClient(`127.0.0.1:${port}`, this.robotOptions(extra));
  }
  /** A client of replica r alone, on its socket (not through a front). */
  direct(r: number): DenocClient {
    return new DenocClient(`unix:${this.socket(r)}`);
  }

  /** Starts denocd r on its socket (again after killReplica: the same socket and store); waits until it answers. */
  async startReplica(r: number): Promise<void> {
    this.replicas[r] = start(
      denocdPath(),
      ['--listen', `unix:${this.socket(r)}`, '--trusted-front-header', '--store-dir', this.store, '--shutdown-grace-ms', '0'],
      path.join(this.dir, `replica${r}.log`),
    );
    await this.ready(this.direct(r), `replica ${r}`);
  }
  /** Kills denocd r with SIGKILL (its front stays). */
  killReplica(r: number): Promise<void> {
    return killGroup(this.replicas[r]);
  }

  /** A balancer named `prefix` over the first `replicas` fronts on a free port (returned); waits until it answers. */
  async startBalancer(prefix: string, replicas: number): Promise<number> {
    const port = await freePort();
    await this.front(prefix, port, this.balancerArgs(replicas));
    return port;
  }
  /** Renders balancer `prefix` on `port` anew over the first `replicas` fronts and reloads it (SIGHUP to
   * front.sh, which passes it to nginx); resolves to the time of the reload (Date.now()). */
  scaleBalancer(prefix: string, port: number, replicas: number): number {
    this.render(prefix, port, this.balancerArgs(replicas));
    const reloaded = Date.now();
    const b = this.fronts.get(prefix);
    if (b?.pid === undefined) throw new Error(`no balancer ${prefix}`);
    process.kill(b.pid, 'SIGHUP');
    return reloaded;
  }

  /** The calls each replica's front has passed on so far (the lines of its access log). */
  perReplica(): number[] {
    return this.frontPorts.map((_, r) => {
      const log = path.join(this.dir, `replica${r}-front`, 'access.log');
      return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l !== '').length : 0;
    });
  }
  /** perReplica() once it stays the same for 200 ms (at most 5 s): nginx writes a call's line when it ended. */
  async settledPerReplica(): Promise<number[]> {
    let n = this.perReplica();
    for (let k = 0; k < 25; k++) {
      await sleep(200);
      const again = this.perReplica();
      if (again.every((x, i) => x === n[i])) break;
      n = again;
    }
    return n;
  }
  /** Seconds from `since` (Date.now()) until replica r's front logged more than `before` calls, or -1 after `timeoutMs`. */
  async secondsUntilCalled(r: number, before: number, since: number, timeoutMs = 30_000): Promise<number> {
    while (Date.now() - since < timeoutMs) {
      if ((this.perReplica()[r] ?? 0) > before) return (Date.now() - since) / 1000;
      await sleep(20);
    }
    return -1;
  }

  async stop(): Promise<void> {
    for (const c of [...this.fronts.values()].reverse()) await killGroup(c);
    for (const c of this.replicas) await killGroup(c);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private balancerArgs(replicas: number): string[] {
    const at = (f: string): string => path.join(this.certs, f);
    const args = ['--site', 'balancer', '--upstream-name', 'localhost', '--balancer-cert', at('balancer.crt')];
    args.push('--balancer-key', at('balancer.key'));
    for (const p of this.frontPorts.slice(0, replicas)) args.push('--upstream', `127.0.0.1:${p}`);
    return args;
  }

  private render(prefix: string, port: number, args: string[]): void {
    const dir = path.join(this.dir, prefix);
    const at = (f: string): string => path.join(this.certs, f);
    execFileSync('bash', [
      path.join(REPO_DIR, 'deploy', 'nginx', 'render.sh'), dir, '--listen', `127.0.0.1:${port}`,
      '--cert', at('tls.crt'), '--key', at('tls.key'), '--client-ca', at('ca.crt'), ...args,
      '--workers', '1', '--access-log', path.join(dir, 'access.log'),
      ...(process.getuid?.() === 0 ? ['--user', 'root'] : []),
    ], { stdio: 'pipe' });
  }

  /** A front (or a balancer) `prefix` on `port`, rendered with `args` and run by front.sh; waits until it answers. */
  private async front(prefix: string, port: number, args: string[]): Promise<void> {
    this.render(prefix, port, args);
    const env = {
      ...process.env,
      PATH: `${path.dirname(NGINX)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      DENOC_FRONT_PREFIX: `${path.join(this.dir, prefix)}/`,
      DENOC_FRONT_CONF: 'nginx.conf',
      DENOC_FRONT_WATCH: path.join(this.certs, 'tls.crt'),
      DENOC_FRONT_RELOAD_S: '1',
    };
    const log = path.join(this.dir, `${prefix}.log`);
    this.fronts.set(prefix, start('/bin/sh', [path.join(REPO_DIR, 'deploy', 'nginx', 'front.sh')], log, env));
    await this.ready(this.robot(port), prefix);
  }

  private async ready(client: DenocClient, what: string): Promise<void> {
    try {
      await client.waitForReady(30_000);
    } catch (e) {
      throw new Error(`${what} does not answer: ${String(e)}`);
    } finally {
      client.close();
    }
  }
}
