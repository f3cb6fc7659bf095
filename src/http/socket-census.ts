/**
 * @module Counting a listener's open connections per remote address from the kernel's socket tables.
 *
 * Why the kernel: uWS tells the connection filter the remote address when a connection opens, but by
 * the time it reports the close the descriptor is gone (the address reads empty) and the response
 * object is a new one, so a close cannot be attributed to an address. The kernel's table is the truth
 * for every thread of the process at once (REST workers share the listening port).
 *
 * A connection still held by the server is ESTABLISHED or CLOSE_WAIT (the peer closed, we have not
 * yet); once the server closes its descriptor the socket moves to FIN_WAIT/TIME_WAIT/LAST_ACK and no
 * longer counts. Connections the kernel has completed but nobody has accepted yet (inode 0) do not count:
 * they are counted as they are accepted, and counting them twice refused bursts far below the limit.
 */
import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';

/** Open connections per remote address (keys from addressKey) on one local port. */
export type Census = ReadonlyMap<string, number>;

const ESTABLISHED = '01';
const CLOSE_WAIT = '08';
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * The key of a remote address as uWS gives it (4 or 16 bytes). An IPv4 client of an IPv6 listener
 * (::ffff:a.b.c.d) gets its IPv4 key, so one client is one key whichever way it arrived.
 */
export function addressKey(raw: ArrayBuffer | Uint8Array): string {
  const b = raw instanceof Uint8Array ? raw : new Uint8Array(raw);
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length === 16 && isV4Mapped(b)) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  let hex = '';
  for (const byte of b) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

function isV4Mapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

/** /proc prints each 32-bit word of an address with %08X in host byte order. */
function wordsToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let w = 0; w < hex.length / 8; w++) {
    for (let i = 0; i < 4; i++) {
      const byte = Number.parseInt(hex.slice(w * 8 + i * 2, w * 8 + i * 2 + 2), 16);
      out[w * 4 + (LITTLE_ENDIAN ? 3 - i : i)] = byte;
    }
  }
  return out;
}

/** Adds the connections of one table (text of /proc/net/tcp or tcp6) on `localPort` to `into`. */
export function countTable(text: string, localPort: number, into: Map<string, number>): void {
  const portHex = localPort.toString(16).toUpperCase().padStart(4, '0');
  let start = text.indexOf('\n') + 1;
  while (start > 0 && start < text.length) {
    const end = text.indexOf('\n', start);
    const stop = end < 0 ? text.length : end;
    // "   N: LOCAL:PORT REMOTE:PORT ST ...": addresses are 8 (IPv4) or 32 (IPv6) hex digits, fixed width.
    const local = text.indexOf(': ', start) + 2;
    const portAt = text.indexOf(':', local);
    const width = portAt - local;
    const remote = portAt + 6;
    const state = text.slice(remote + width + 6, remote + width + 8);
    if (text.startsWith(portHex, portAt + 1) && (state === ESTABLISHED || state === CLOSE_WAIT)) {
      // Field 9 is the inode; 0 means nobody has accepted the connection yet.
      const inode = text.slice(start, stop).trim().split(/\s+/, 10)[9];
      if (inode !== undefined && inode !== '0') {
        const key = addressKey(wordsToBytes(text.slice(remote, remote + width)));
        into.set(key, (into.get(key) ?? 0) + 1);
      }
    }
    start = stop + 1;
  }
}

/**
 * Reads the kernel's IPv4 and IPv6 TCP tables off the event loop (the kernel takes ~6 µs per socket of
 * the host: ~0.1 s at 17,000); a host without IPv6 has no tcp6. Rejects when neither table exists (not
 * Linux).
 */
export async function takeCensus(localPort: number, tables: readonly string[] = ['/proc/net/tcp', '/proc/net/tcp6']): Promise<Census> {
  const counts = new Map<string, number>();
  let read = 0;
  for (const table of tables) {
    let text: string;
    try {
      text = await readFile(table, 'latin1');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    countTable(text, localPort, counts);
    read++;
  }
  if (read === 0) throw new Error(`no kernel socket table at ${tables.join(' or ')}`);
  return counts;
}
