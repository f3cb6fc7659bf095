/**
 * @module A client that asks for a large response and reads it late, run inside the partial-write test's
 * network namespace (`ip netns exec NS node --import … slow-reader.ts PORT KEY TRIALS`).
 *
 * There the receive buffers are small, so the server cannot hand a large page to the kernel at once and
 * finishes it from `onWritable` as this client reads. While the page is half sent, other requests are
 * served on the server's thread; when this client reads on, every byte must still be the page's own.
 * Prints one JSON line: trials, the page's size, spliced (pages whose bytes differ from the same page
 * read at once), and the first difference seen.
 */
import { connect, type NetConnectOpts, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const [port, key, trials] = [Number(process.argv[2]), process.argv[3]!, Number(process.argv[4] ?? 5)];
const BIG = '/v1/health/plans?zip=77002&age=40&per_page=100';
const OTHERS = [21, 30, 50, 60, 64].map((age) => `/v1/health/plans?zip=77002&age=${age}&per_page=100&sort_by=deductible`);

/** One raw HTTP/1.1 GET on a socket that reads nothing until told, through a small readable buffer. */
function request(path: string): { socket: Socket; body: Promise<Buffer> } {
  // A small readable buffer: Node itself then holds back little of what the kernel would hand it.
  const socket = connect({ host: '127.0.0.1', port, readableHighWaterMark: 1024 } as unknown as NetConnectOpts);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nAccept-Encoding: identity\r\n\r\n`);
  socket.pause();
  const body = new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      total += chunk.length;
      const all = Buffer.concat(chunks, total);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(all.subarray(0, end).toString('latin1'))?.[1]);
      if (all.length >= end + 4 + length) {
        socket.destroy();
        resolve(all.subarray(end + 4, end + 4 + length));
      }
    });
  });
  return { socket, body };
}

async function fetchNow(path: string): Promise<Buffer> {
  const r = request(path);
  r.socket.resume();
  return r.body;
}

const expected = await fetchNow(BIG);
let spliced = 0;
let first: string | null = null;
for (let t = 0; t < trials; t++) {
  const slow = request(BIG);
  await sleep(150); // the server has written what the small buffers take, and waits for onWritable
  await Promise.all(OTHERS.map(fetchNow)); // served meanwhile on the same thread
  slow.socket.resume();
  const got = await slow.body;
  if (!got.equals(expected)) {
    spliced++;
    if (first === null) {
      let at = 0;
      while (at < got.length && got[at] === expected[at]) at++;
      first = `${got.length} bytes (expected ${expected.length}), first difference at byte ${at}`;
    }
  }
}
process.stdout.write(`${JSON.stringify({ trials, pageBytes: expected.length, spliced, first })}\n`);
