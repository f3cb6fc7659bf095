/**
 * @module The peers whose PROXY protocol header is believed (HPD_TRUSTED_PROXIES): addresses and CIDR
 * blocks, IPv4 and IPv6. Everyone else's address is the socket's peer, whatever it sends.
 *
 * Addresses are compared as 16 bytes, IPv4 as IPv4-mapped IPv6 (::ffff:a.b.c.d), so a proxy reaching a
 * dual-stack listener in either form matches the same entry.
 */
import { isIPv4, isIPv6 } from 'node:net';

interface Block {
  readonly bytes: Uint8Array;
  /** Leading bits that must match, of 128. */
  readonly bits: number;
}

const V4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** 16 bytes of an IPv4 or IPv6 literal (IPv4 mapped), or undefined when it is neither. */
export function addressBytes(text: string): Uint8Array | undefined {
  if (isIPv4(text)) return Uint8Array.from([...V4_MAPPED_PREFIX, ...text.split('.').map(Number)]);
  if (!isIPv6(text) || text.includes('%')) return undefined;
  let head = text;
  let tail4: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail4 = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const groups = (s: string | undefined): string[] => (s === undefined || s === '' ? [] : s.split(':'));
  const l = groups(left);
  const r = groups(right);
  const all = right === undefined ? l : [...l, ...Array<string>(8 - l.length - r.length).fill('0'), ...r];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    const n = Number.parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  if (tail4.length === 4) out.set(tail4, 12);
  return out;
}

/** One entry of the list: `a.b.c.d`, `a.b.c.d/n`, an IPv6 literal or `ipv6/n`; undefined when invalid. */
function parseBlock(entry: string): Block | undefined {
  const slash = entry.indexOf('/');
  const addr = slash < 0 ? entry : entry.slice(0, slash);
  const bytes = addressBytes(addr);
  if (bytes === undefined) return undefined;
  const v4 = isIPv4(addr);
  const max = v4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const text = entry.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(text)) return undefined;
    prefix = Number(text);
    if (prefix > max) return undefined;
  }
  return { bytes, bits: v4 ? prefix + 96 : prefix };
}

/**
 * The entries of HPD_TRUSTED_PROXIES, trimmed, or undefined when one is not an address or block (the
 * setting's parser: a typo must stop the start, not leave the proxy untrusted).
 */
export function parseTrustedProxyList(text: string): readonly string[] | undefined {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return entries.length > 0 && entries.every((e) => parseBlock(e) !== undefined) ? entries : undefined;
}

function matches(b: Block, addr: Uint8Array): boolean {
  const whole = b.bits >> 3;
  for (let i = 0; i < whole; i++) if (b.bytes[i] !== addr[i]) return false;
  const rest = b.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((b.bytes[whole]! ^ addr[whole]!) & mask) === 0;
}

export class TrustedProxies {
  readonly #blocks: readonly Block[];
  /** An IPv4 address from uWS, mapped (bytes 12-15 rewritten for each). */
  readonly #mapped = Uint8Array.from([...V4_MAPPED_PREFIX, 0, 0, 0, 0]);
  /** The answer for each peer seen as text, bounded. */
  readonly #seen = new Map<string, boolean>();

  /** @param entries what parseTrustedProxyList accepted (it travels to worker threads as strings) */
  constructor(entries: readonly string[]) {
    this.#blocks = entries.map((e) => {
      const b = parseBlock(e);
      if (b === undefined) throw new TypeError(`not an IP address or CIDR block: ${e}`);
      return b;
    });
  }

  get empty(): boolean {
    return this.#blocks.length === 0;
  }

  /** Whether a peer given as text (node:net's `remoteAddress`, maybe `::ffff:a.b.c.d`) is trusted. */
  has(text: string | undefined): boolean {
    if (text === undefined || this.#blocks.length === 0) return false;
    const cached = this.#seen.get(text);
    if (cached !== undefined) return cached;
    const bytes = addressBytes(text);
    const trusted = bytes !== undefined && this.#blocks.some((b) => matches(b, bytes));
    if (this.#seen.size >= 1024) this.#seen.clear();
    this.#seen.set(text, trusted);
    return trusted;
  }

  /** The same for uWS's 4 or 16 address bytes (REST asks on every request: nothing copied). */
  hasRaw(raw: ArrayBuffer): boolean {
    if (this.#blocks.length === 0) return false;
    const b = new Uint8Array(raw);
    if (b.length === 4) {
      this.#mapped.set(b, 12);
      return this.#blocks.some((block) => matches(block, this.#mapped));
    }
    return b.length === 16 && this.#blocks.some((block) => matches(block, b));
  }
}
