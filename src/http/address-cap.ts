/**
 * @module The per-address share of the REST connection cap: one address cannot hold more than `max`
 * connections, so a flood from one client leaves the rest of the cap to everybody else.
 *
 * Opens are counted as uWS reports them; closes cannot be attributed to an address (see
 * socket-census.ts), so counts only grow between two censuses of the kernel's socket table. A census is
 * asked for only when an address's count passes half its limit (or the tally of addresses grows large), and the
 * next one waits 20 times as long as the last one took (10 ms to 1 s): a client under its limit never
 * pays for one, and a flood costs at most ~5 % of a thread in table reads, off the event loop.
 * Between censuses the estimate can only be too high (opens counted since a census began may already
 * be in it), so the error is a refusal of an address at its limit, never a way past it; a refused
 * client that reconnects is admitted once a census shows room.
 *
 * With REST workers the census sees every thread's connections, and each thread counts its own opens
 * as if every other thread had accepted as many (the acceptor deals connections in turn), so the
 * threads together stay within the limit (past it by at most one per other thread) without talking to
 * each other.
 */
import { logAtMostPeriodically } from './connection-cap.ts';
import { addressKey, type Census, takeCensus } from './socket-census.ts';

/** Default: 10 % of the default REST cap, and above HAProxy's per-instance maxconn (deploy/haproxy.cfg). */
export const DEFAULT_REST_MAX_CONNECTIONS_PER_ADDRESS = 1_000;

const MIN_CENSUS_INTERVAL_MS = 10;
/**
 * What a census took includes waiting for the thread pool and the event loop, which can be long on a
 * busy host: the pause stays below this, so a refused address that has closed its connections gets them
 * back within about a second.
 */
const MAX_CENSUS_INTERVAL_MS = 1_000;
/** The pause after a census, in multiples of what it took: bounds the share of a thread spent on them. */
const CENSUS_PAUSE_FACTOR = 20;
/** Past this many addresses opened since the last census, a census resets the tally. */
const TALLY_LIMIT = 4_096;

export interface AddressCapOptions {
  /** Connections one address may hold. */
  readonly max: number;
  /** The listening port (0 while not yet known). */
  readonly port: () => number;
  readonly name: string;
  /** Threads accepting for the same listener (REST workers); default 1. */
  readonly threads?: number;
  readonly log?: (line: string) => void;
}

export class AddressCap {
  readonly #o: AddressCapOptions;
  readonly #threads: number;
  readonly #log: (line: string) => void;
  readonly #refusedLog: (line: string) => void;
  #base: Census = new Map();
  /** Opens since the census in use began. */
  #since = new Map<string, number>();
  /** Opens since the census under way began (null: none under way). */
  #next: Map<string, number> | null = null;
  #nextCensusAt = 0;
  #off = false;

  constructor(o: AddressCapOptions) {
    this.#o = o;
    this.#threads = o.threads ?? 1;
    this.#log = o.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.#refusedLog = logAtMostPeriodically(this.#log);
  }

  /**
   * A connection from `remote` (uWS's 4 or 16 address bytes) opened while this thread holds `open`
   * connections (this one included): false means close it.
   */
  admit(remote: ArrayBuffer, open: number): boolean {
    if (this.#off) return true;
    const key = addressKey(remote);
    const since = this.#since.get(key) ?? 0;
    // Closes are counted for the thread, not the address: no address holds more than the thread does,
    // so a client that opens and closes one connection at a time never looks like a flood.
    const estimate = Math.min((this.#base.get(key) ?? 0) + since * this.#threads, (open - 1) * this.#threads) + 1;
    if (estimate > this.#o.max) {
      this.#refresh();
      this.#refusedLog(
        `${this.#o.name}: ${key} holds ${this.#o.max} connections (HPD_REST_MAX_CONNECTIONS_PER_ADDRESS): refusing its new ones`,
      );
      return false;
    }
    this.#since.set(key, since + 1);
    if (this.#next !== null) this.#next.set(key, (this.#next.get(key) ?? 0) + 1);
    // Halfway there, a census: on a busy thread, a client that opens and closes connections one after
    // another (no keep-alive) has its tally reset long before it could reach the limit.
    if (estimate * 2 > this.#o.max || this.#since.size > TALLY_LIMIT) this.#refresh();
    return true;
  }

  #refresh(): void {
    const port = this.#o.port();
    const started = performance.now();
    if (this.#next !== null || port === 0 || started < this.#nextCensusAt) return;
    const next = new Map<string, number>();
    this.#next = next;
    takeCensus(port).then(
      (census) => {
        this.#base = census;
        this.#since = next;
        this.#next = null;
        const now = performance.now();
        this.#nextCensusAt =
          now + Math.min(MAX_CENSUS_INTERVAL_MS, Math.max(MIN_CENSUS_INTERVAL_MS, (now - started) * CENSUS_PAUSE_FACTOR));
      },
      (err: unknown) => {
        this.#off = true;
        this.#next = null;
        this.#log(`${this.#o.name}: per-address connection limit off: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
  }
}
