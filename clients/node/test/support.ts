// Test support: real denocd processes on 127.0.0.1 (port 0, --port-file, a temporary store directory), the
// denoc command-line tool as the in-process oracle, deterministic random states, tolerance checks.
//
// Environment: DENOCD (the denocd binary), DENOC_CLI (the denoc tool), DENOC_MODELS_DIR (the robot files;
// default: the repository's examples/models). Without DENOCD/DENOC_CLI the release build's
// binaries (build/release) are used.
import * as assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

/** clients/node (this file runs as clients/node/dist/test/support.js). */
export const PACKAGE_DIR = path.resolve(__dirname, '..', '..');
export const REPO_DIR = path.resolve(PACKAGE_DIR, '..', '..');
export const MODELS_DIR = path.resolve(process.env.DENOC_MODELS_DIR ?? path.join(REPO_DIR, 'examples', 'models'));
export const PANDA_HAND = path.join(MODELS_DIR, 'panda_hand.urdf');
export const PANDA_TIP = 'panda_hand_tcp';

function binary(variable: string, fallback: string): string {
  const p = process.env[variable] ?? path.join(REPO_DIR, 'build', 'release', fallback);
  if (!fs.existsSync(p)) {
    throw new Error(`${p} not found: set ${variable} to the ${path.basename(fallback)} binary (ctest does)`);
  }
  return p;
}

export const denocdPath = (): string => binary('DENOCD', 'server/denocd');
export const cliPath = (): string => binary('DENOC_CLI', 'clients/cli/denoc');

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `denoc-node-${prefix}-`));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface Server {
  address: string;
  port: number;
  storeDir: string;
  /** Where the store keeps its records: the format's directory, <storeDir>/v1 (docs/service.md, "Store"). */
  recordsDir: string;
  process: ChildProcess;
  /** Log lines the server wrote to stderr. */
  log(): string;
  /** SIGTERM, then SIGKILL after 10 s; removes the temporary directory. */
  stop(): Promise<void>;
}

/**
 * Starts denocd on 127.0.0.1 (on the given port, else any) with a new empty store (or the given one); waits at
 * most 20 s for its port.
 */
export async function startServer(options: { storeDir?: string; args?: string[]; port?: number } = {}): Promise<Server> {
  const dir = tempDir('server');
  const storeDir = options.storeDir ?? path.join(dir, 'store');
  const portFile = path.join(dir, 'port');
  const child = spawn(
    denocdPath(),
    [
      '--listen', `127.0.0.1:${options.port ?? 0}`,
      '--port-file', portFile,
      '--store-dir', storeDir,
      '--shutdown-grace-ms', '0',
      '--drain-timeout-ms', '2000',
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (s: string) => {
    stderr += s;
  });
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      exited = code ?? (signal ? -1 : null);
      resolve();
    });
  });
  const deadline = Date.now() + 20_000;
  let port = 0;
  while (port === 0) {
    if (exited !== undefined) throw new Error(`denocd exited (${exited}) before listening:\n${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`denocd did not write ${portFile} within 20 s:\n${stderr}`);
    }
    try {
      const text = fs.readFileSync(portFile, 'utf8').trim();
      if (/^\d+$/.test(text)) port = Number(text);
    } catch {
      // not written yet
    }
    if (port === 0) await sleep(20);
  }
  let stopped = false;
  return {
    address: `127.0.0.1:${port}`,
    port,
    storeDir,
    recordsDir: path.join(storeDir, 'v1'),
    process: child,
    log: () => stderr,
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      if (exited === undefined) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(killer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CliState {
  q?: number[];
  qd?: number[];
  qdd?: number[];
  tau?: number[];
  D?: number[];
  I?: number[][];
  U?: number[][];
  I_inv?: number[][];
  log_det?: number;
}

/** Runs the denoc tool on a model file and states (JSON) and returns its JSON answer's states. */
export async function runCli(
  command: 'id' | 'fd' | 'factor',
  model: string,
  states: CliState[],
  extra: string[] = [],
): Promise<CliState[]> {
  const dir = tempDir('cli');
  try {
    const file = path.join(dir, 'states.json');
    fs.writeFileSync(file, JSON.stringify(states)); // shortest round-trip decimal: exact doubles
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        cliPath(),
        [command, model, '--states', file, '--format', 'json', ...extra],
        { maxBuffer: 256 * 1024 * 1024, timeout: 60_000 },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`denoc ${command} failed: ${err.message}\n${stderr}`));
          else resolve(stdout);
        },
      );
    });
    const doc = JSON.parse(out) as { states: CliState[] };
    assert.equal(doc.states.length, states.length);
    return doc.states;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A deterministic generator of uniform numbers in [0, 1) (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** count * dof values uniform in [lo, hi). */
export function randomBatch(random: () => number, count: number, dof: number, lo: number, hi: number): Float64Array {
  const a = new Float64Array(count * dof);
  for (let i = 0; i < a.length; i++) a[i] = lo + (hi - lo) * random();
  return a;
}

export function rows(batch: Float64Array, count: number, dof: number): number[][] {
  const out: number[][] = [];
  for (let k = 0; k < count; k++) out.push(Array.from(batch.subarray(k * dof, (k + 1) * dof)));
  return out;
}

/** |got - want| <= tol * max(1, |want|) for every entry (the server tests' criterion). */
export function expectClose(got: ArrayLike<number>, want: ArrayLike<number>, what: string, tol = 1e-12): void {
  assert.equal(got.length, want.length, `${what}: ${got.length} values, expected ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    const g = got[i] as number;
    const w = want[i] as number;
    if (!(Math.abs(g - w) <= tol * Math.max(1, Math.abs(w)))) {
      assert.fail(`${what}[${i}]: got ${g}, expected ${w} (difference ${g - w}, tolerance ${tol} relative)`);
    }
  }
}

/** A well-formed model id (64 lower-case hex digits) no server has. */
export const UNKNOWN_ID = 'ab'.repeat(32);

/** denoc_requests_total{code, rpc} from the server's metrics endpoint. */
export function calls(port: number, rpc: string, code = 'OK'): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/metrics', agent: false, headers: { connection: 'close' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (s: string) => (body += s));
        res.on('end', () => {
          const series = `denoc_requests_total{code="${code}",rpc="${rpc}"} `;
          const line = body.split('\n').find((l) => l.startsWith(series));
          resolve(line === undefined ? 0 : Number(line.slice(series.length)));
        });
      })
      .on('error', reject);
  });
}
