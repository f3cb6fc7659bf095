/**
 * @module Parsers of environment values. Each returns undefined for a value it refuses, and the setting
 * that uses it says what was expected, so every error reads "<NAME> must be <expected>, got <value>".
 * Patterns rather than Number(): Number accepts '1e3', '0x10', ' 5 ' and '', which nobody means.
 */
import { resolve } from 'node:path';
import { parseRedisUrl } from '../policy/redis-url.ts';

export type Parser<T> = (text: string) => T | undefined;

const INTEGER = /^(0|[1-9][0-9]*)$/;
const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

export function integer(min: number, max: number): Parser<number> {
  return (text) => {
    const n = INTEGER.test(text) ? Number(text) : Number.NaN;
    return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
  };
}

/** A non-negative decimal number such as 0.5 or 30, within [min, max] (min may be excluded). */
export function decimal(min: number, max: number, opts: { readonly minExclusive?: boolean } = {}): Parser<number> {
  return (text) => {
    const n = DECIMAL.test(text) ? Number(text) : Number.NaN;
    if (!Number.isFinite(n) || n > max) return undefined;
    return (opts.minExclusive === true ? n > min : n >= min) ? n : undefined;
  };
}

export const port: Parser<number> = integer(0, 65535);

/** Host names, IPv4 and IPv6 literals; no scheme, port or path (those belong in the URL settings). */
export const host: Parser<string> = (text) => (/^[A-Za-z0-9._:%-]+$/.test(text) ? text : undefined);

/** An absolute http(s) URL; trailing slashes dropped, because links are built by appending paths. */
export const httpUrl: Parser<string> = (text) => {
  const u = URL.parse(text);
  if (u === null || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') return undefined;
  return text.replace(/\/+$/, '');
};

/** redis://, rediss:// or redis+sentinel:// (src/policy/redis-url.ts). */
export const redisUrl: Parser<string> = (text) => ('problem' in parseRedisUrl(text) ? undefined : text);

/** What is wrong with a refused Redis URL. */
export const redisUrlProblem = (text: string): string | undefined => {
  const parsed = parseRedisUrl(text);
  return 'problem' in parsed ? parsed.problem : undefined;
};

/** Comma-separated http(s) origins, e.g. https://app.example,https://other.example. */
export const originList: Parser<readonly string[]> = (text) => {
  const items = text
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  const origins = items.map((o) => URL.parse(o));
  return origins.every(
    (u, i) => u !== null && (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === items[i]!.replace(/\/$/, ''),
  )
    ? items.map((o) => o.replace(/\/$/, ''))
    : undefined;
};

export const flag: Parser<boolean> = (text) => (text === '1' ? true : text === '0' ? false : undefined);

export const path: Parser<string> = (text) => resolve(text);

/** `off`, `full` or a sampling rate in (0, 1]: the fraction of requests logged (0 = off, 1 = full). */
export const sampleRate: Parser<number> = (text) =>
  text === 'off' ? 0 : text === 'full' ? 1 : decimal(0, 1, { minExclusive: true })(text);
