/**
 * @module MCP sessions (protocol 2025-11-25): created by `initialize`, bound to the principal that
 * created them, destroyed after an idle period (30 minutes by default). Any request carrying the session
 * id counts as activity. Expiry is checked against an injectable clock when a request arrives, so tests
 * need not wait; a sweeper frees abandoned sessions. Tool results never depend on a session: auth and
 * tier are read on every request.
 */

export interface SessionEntry<T> {
  readonly id: string;
  readonly owner: string;
  readonly value: T;
  lastActive: number;
}

export interface SessionRegistryOptions<T> {
  readonly idleMs: number;
  readonly maxPerOwner: number;
  readonly clock: () => number;
  /** Releases a session's resources (transport, server). */
  readonly dispose: (value: T) => Promise<void> | void;
}

export class SessionRegistry<T> {
  readonly #live = new Map<string, SessionEntry<T>>();
  readonly #opts: SessionRegistryOptions<T>;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(opts: SessionRegistryOptions<T>) {
    this.#opts = opts;
    this.#sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, opts.idleMs / 2)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#live.size;
  }

  /** Registers a new session, evicting the owner's oldest when over the cap. */
  add(id: string, owner: string, value: T): void {
    const mine = [...this.#live.values()].filter((s) => s.owner === owner).sort((a, b) => a.lastActive - b.lastActive);
    while (mine.length >= this.#opts.maxPerOwner) void this.drop(mine.shift()!.id);
    this.#live.set(id, { id, owner, value, lastActive: this.#opts.clock() });
  }

  /**
   * The live session with this id for this owner, marked active; undefined when unknown, expired or
   * owned by someone else (all three answer 404, so ids cannot be probed).
   */
  touch(id: string, owner: string): T | undefined {
    const s = this.#live.get(id);
    if (s === undefined) return undefined;
    const now = this.#opts.clock();
    if (now - s.lastActive > this.#opts.idleMs) {
      void this.drop(id);
      return undefined;
    }
    if (s.owner !== owner) return undefined;
    s.lastActive = now;
    return s.value;
  }

  async drop(id: string): Promise<void> {
    const s = this.#live.get(id);
    if (s === undefined) return;
    this.#live.delete(id);
    await this.#opts.dispose(s.value);
  }

  sweep(): void {
    const now = this.#opts.clock();
    for (const s of this.#live.values()) if (now - s.lastActive > this.#opts.idleMs) void this.drop(s.id);
  }

  async close(): Promise<void> {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    await Promise.all([...this.#live.keys()].map((id) => this.drop(id)));
  }
}
