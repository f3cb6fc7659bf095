/**
 * @module REST on every core: one uWS acceptor app in the main thread listens (exclusively) and hands
 * each new connection to one of N worker threads in turn (uWS child app descriptors); each worker runs
 * the whole REST front (src/http/rest-worker.ts).
 *
 * A worker that dies is logged in one line and replaced (after 0.2 s, doubling to 5 s while replacements
 * keep dying, so a broken build cannot spin). The acceptor stops handing a worker connections before it
 * closes its app: uWS must never hand a connection to an app that is gone.
 */
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { YearImage } from '../operations/data-registry.ts';
import type { FromWorker, RestWorkerData, ToWorker } from './rest-worker-protocol.ts';
import { listenExclusive, uws, type us_listen_socket } from './uws.ts';
import { InvariantError } from '../invariant.ts';

const WORKER_URL = new URL('./rest-worker.ts', import.meta.url);
/** Workers load our TypeScript through the same hooks as the main thread. */
const HOOKS = new URL('../../bin/register-typescript.js', import.meta.url).href;
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5000;
/**
 * V8's young generation of a worker (both semi-spaces and the new large-object space). The default
 * grows to 48 MiB, all of it touched under load: 83 MiB per extra worker on the national build. At 12
 * MiB a worker costs 53 MiB and serves as many requests (bench/workers.bench.ts: 19.3k vs 18.6k req/s
 * with 2 workers, 69 vs 71 µs CPU per request); at 6 MiB one worker lost a quarter of its rate.
 */
const WORKER_YOUNG_GENERATION_MB = 12;
/**
 * The floor V8 may shrink a worker's semi-spaces to: their size at that cap (V8 sizes a young
 * generation as three semi-spaces). A few seconds of idleness make V8's memory reducer shrink a new
 * space, and a request's short-lived objects never make it grow back: a worker that had been idle
 * would then scavenge several times as often per request as one that had not, for good
 * (bench/results/tail.md counts scavenges per 1,000 requests). It keeps ~8 MiB in an idle worker.
 */
const WORKER_MIN_SEMI_SPACE_MB = WORKER_YOUNG_GENERATION_MB / 3;
/** How long close() waits for workers to close their apps. */
const CLOSE_WAIT_MS = 5000;

export interface RestPoolConfig {
  readonly workers: number;
  /** Shared by every worker; `index`, its share of the connection cap and the years are added per worker. */
  readonly worker: Omit<RestWorkerData, 'index' | 'maxConnections' | 'maxConnectionsPerAddress' | 'port' | 'threads' | 'years'>;
  /** The builds served now (a replacement worker starts on these). */
  readonly years: () => readonly YearImage[];
  /** The whole REST connection cap, split evenly among the workers. */
  readonly maxConnections: number;
  /** Connections one address may hold, across all workers (src/http/address-cap.ts); 0: no limit. */
  readonly maxConnectionsPerAddress?: number;
  readonly log?: (line: string) => void;
}

export interface RestPool {
  /** Listens exclusively once every worker is ready; resolves with the port. */
  listen(port: number, host: string): Promise<number>;
  /**
   * Every worker serves these builds from now on (attaching takes a worker milliseconds: the main thread
   * opened and verified them); resolves once each one answered.
   */
  follow(years: readonly YearImage[]): Promise<void>;
  /** Every worker fails readiness and keeps serving. */
  drain(): void;
  /** Fault injection (tests, drills): worker `index` fails as a bug would, and is replaced. */
  failWorker(index: number): void;
  /**
   * Stops accepting; each worker lets the responses it is still writing finish for up to `graceMs`
   * (default 0), then closes its connections and ends. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
  /** Workers started to replace one that died, since start. */
  readonly replaced: number;
  /** Workers serving now. */
  readonly serving: number;
}

interface Slot {
  worker: Worker;
  descriptor: unknown;
  /** Registered with the acceptor (receiving connections). */
  attached: boolean;
}

type Acceptor = ReturnType<typeof uws.App> & { addChildAppDescriptor(d: unknown): void; removeChildAppDescriptor(d: unknown): void };

export async function startRestPool(c: RestPoolConfig): Promise<RestPool> {
  if (!Number.isSafeInteger(c.workers) || c.workers < 1) throw new InvariantError(`workers must be a positive integer, got ${c.workers}`);
  const pool = new WorkerPool(c);
  try {
    await Promise.all(Array.from({ length: c.workers }, (_, i) => pool.spawn(i)));
  } catch (err) {
    await pool.abandon();
    throw err;
  }
  return pool;
}

class WorkerPool implements RestPool {
  readonly #c: RestPoolConfig;
  readonly #log: (line: string) => void;
  readonly #acceptor = uws.App() as Acceptor;
  readonly #slots = new Map<number, Slot>();
  readonly #perWorker: number;
  readonly #port = new Int32Array(new SharedArrayBuffer(4));
  #closing = false;
  #closed: Promise<void> | undefined;
  #replaced = 0;
  #backoff = FIRST_BACKOFF_MS;
  #listenSocket: us_listen_socket | null = null;

  constructor(c: RestPoolConfig) {
    this.#c = c;
    this.#log = c.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    this.#perWorker = Math.max(1, Math.floor(c.maxConnections / c.workers));
    // A V8 flag, read when an isolate's heap is set up: it applies to every worker made from now on,
    // replacements included (the main thread's heap is already set up). Node offers no per-worker option.
    setFlagsFromString(`--min-semi-space-size=${WORKER_MIN_SEMI_SPACE_MB}`);
  }

  get replaced(): number {
    return this.#replaced;
  }

  get serving(): number {
    return [...this.#slots.values()].filter((s) => s.attached).length;
  }

  /** Starts worker `index`; resolves once it is ready (and registered with the acceptor unless closing). */
  spawn(index: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const data: RestWorkerData = {
        ...this.#c.worker,
        index,
        maxConnections: this.#perWorker,
        maxConnectionsPerAddress: this.#c.maxConnectionsPerAddress,
        port: this.#port.buffer as SharedArrayBuffer,
        threads: this.#c.workers,
        years: this.#c.years(),
      };
      const worker = new Worker(WORKER_URL, {
        workerData: data,
        execArgv: ['--import', HOOKS],
        resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
      });
      let ready = false;
      /** What the worker reported before it closed, if it failed. */
      let failure: string | null = null;
      worker.on('message', (m: FromWorker) => {
        if (m.type === 'ready') {
          const slot: Slot = { worker, descriptor: m.descriptor, attached: false };
          this.#slots.set(index, slot);
          if (!this.#closing) {
            this.#acceptor.addChildAppDescriptor(m.descriptor);
            slot.attached = true;
          }
          ready = true;
          this.#backoff = FIRST_BACKOFF_MS;
          resolve();
        } else if (m.type === 'fatal') {
          failure = m.message;
          const slot = this.#slots.get(index);
          if (slot !== undefined) this.#detach(slot);
          worker.postMessage({ type: 'close' } satisfies ToWorker);
        }
      });
      worker.once('error', (err) => {
        this.#log(`hpd: rest worker ${index} failed: ${err.message.split('\n')[0]}`);
        if (!ready) reject(err);
      });
      worker.once('exit', (code) =>
        this.#exited(index, worker, ready, failure === null ? `exited unexpectedly (code ${code})` : `failed: ${failure}`),
      );
    });
  }

  /** Forgets a worker that ended and, unless closing or it never got ready, starts its replacement after the back-off. */
  #exited(index: number, worker: Worker, ready: boolean, why: string): void {
    const slot = this.#slots.get(index);
    if (slot?.worker === worker) {
      this.#detach(slot);
      this.#slots.delete(index);
    }
    if (this.#closing || !ready) return;
    this.#replaced++;
    this.#log(`hpd: rest worker ${index} ${why}; starting a replacement in ${this.#backoff} ms`);
    const delay = this.#backoff;
    this.#backoff = Math.min(MAX_BACKOFF_MS, this.#backoff * 2);
    setTimeout(() => {
      if (!this.#closing)
        this.spawn(index).catch((err: unknown) =>
          this.#log(`hpd: rest worker ${index} could not be replaced: ${err instanceof Error ? err.message : String(err)}`),
        );
    }, delay).unref();
  }

  #detach(slot: Slot): void {
    if (!slot.attached) return;
    this.#acceptor.removeChildAppDescriptor(slot.descriptor);
    slot.attached = false;
  }

  /** A worker failed to start: the others are closed before the error goes up. */
  async abandon(): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#slots.values()].map((s) => closeWorker(s.worker)));
  }

  listen(port: number, host: string): Promise<number> {
    return listenExclusive(this.#acceptor, 'rest', host, port).then((token) => {
      this.#listenSocket = token;
      const port = uws.us_socket_local_port(token);
      Atomics.store(this.#port, 0, port);
      return port;
    });
  }

  follow(years: readonly YearImage[]): Promise<void> {
    return Promise.all([...this.#slots.values()].map((s) => followOne(s.worker, years))).then(() => undefined);
  }

  failWorker(index: number): void {
    this.#slots.get(index)?.worker.postMessage({ type: 'fail' } satisfies ToWorker);
  }

  drain(): void {
    for (const s of this.#slots.values()) s.worker.postMessage({ type: 'drain' } satisfies ToWorker);
  }

  close(graceMs = 0): Promise<void> {
    this.#closed ??= this.#close(graceMs);
    return this.#closed;
  }

  async #close(graceMs: number): Promise<void> {
    this.#closing = true;
    if (this.#listenSocket !== null) {
      uws.us_listen_socket_close(this.#listenSocket);
      this.#listenSocket = null;
    }
    for (const s of this.#slots.values()) this.#detach(s);
    await Promise.all([...this.#slots.values()].map((s) => closeWorker(s.worker, graceMs)));
    this.#acceptor.close();
  }
}

/** Tells a worker to serve `years`; resolves when it answered, or ended. */
function followOne(worker: Worker, years: readonly YearImage[]): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (m: FromWorker): void => {
      if (m.type !== 'followed') return;
      worker.off('message', done);
      worker.off('exit', gone);
      resolve();
    };
    const gone = (): void => {
      worker.off('message', done);
      resolve();
    };
    worker.on('message', done);
    worker.once('exit', gone);
    worker.postMessage({ type: 'follow', years } satisfies ToWorker);
  });
}

/** Asks a worker to close its app and end; resolves when it did (or CLOSE_WAIT_MS after its grace). */
function closeWorker(worker: Worker, graceMs = 0): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, graceMs + CLOSE_WAIT_MS);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.postMessage({ type: 'close', graceMs } satisfies ToWorker);
  });
}
