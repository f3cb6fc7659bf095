/**
 * @module Tells operators, once per change, how the state store answers: a line on stderr and a
 * structured `state.health` event. The store's own lines (redis-link.ts) say when Redis dropped or
 * lost its data, per thread; this one also says when the grace ran out ('unavailable'), which no
 * Redis event marks, and it is the single process-wide line an alert or a log search can key on.
 */
import type { StateStore, StoreHealth } from '../policy/state-store.ts';
import type { Logger } from './logger.ts';

/** How often the health is compared; a change shows within this. */
export const HEALTH_WATCH_MS = 1000;

const MEANING: Readonly<Record<StoreHealth, string>> = {
  ok: 'the state store answers',
  degraded: 'Redis is unreachable: known API keys are served from the last known state, unknown ones get 503',
  lost: "Redis has lost hpd's data (or holds another dataset): known API keys are served from the last known state, unknown ones get 503; restore Redis from its backup, or run hpd redis adopt / hpd redis init",
  unavailable: 'the state store has been unreachable for longer than HPD_REDIS_GRACE_SECONDS: every authenticated request gets 503',
};

export interface StoreHealthWatch {
  close(): void;
}

export function watchStoreHealth(
  store: Pick<StateStore, 'health'>,
  o: { readonly logger?: Logger; readonly write?: (line: string) => void; readonly intervalMs?: number } = {},
): StoreHealthWatch {
  const write = o.write ?? ((line: string) => void process.stderr.write(`${line}\n`));
  let last: StoreHealth = store.health();
  const timer = setInterval(() => {
    const now = store.health();
    if (now === last) return;
    const previous = last;
    last = now;
    write(`hpd: state store ${now} (was ${previous}): ${MEANING[now]}`);
    const event = { event: 'state.health', health: now, previous };
    if (now === 'ok') o.logger?.info(event, MEANING[now]);
    else if (now === 'unavailable') o.logger?.error(event, MEANING[now]);
    else o.logger?.warn(event, MEANING[now]);
  }, o.intervalMs ?? HEALTH_WATCH_MS);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
