/**
 * One address reconnecting as fast as it can must not take the whole REST
 * connection cap. A flood from 127.0.0.2 keeps 200 connections wanted against a cap of 150; a client at
 * 127.0.0.3 must still be served, the flood must hold no more than its per-address share, and the share
 * must come back once the flood's connections close (closes are counted even though uWS cannot say
 * whose they are). Without the per-address limit the flood holds all 150 and the client is refused.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { startTestServices } from '../helpers/services.ts';
import { statusLine } from '../helpers/status-line.ts';

const CAP = 150;
const PER_ADDRESS = 40;
const FLOOD = 200;

/** Keeps `wanted` connections from `from` open, reconnecting 20 ms after each close, until stopped. */
function flood(port: number, from: string, wanted: number) {
  const open = new Set<Socket>();
  const all = new Set<Socket>();
  let running = true;
  let closed = 0;
  const one = (): void => {
    const s = connect({ port, host: '127.0.0.1', localAddress: from });
    all.add(s);
    s.on('error', () => {});
    s.on('connect', () => open.add(s));
    s.on('close', () => {
      open.delete(s);
      all.delete(s);
      closed += 1;
      if (running) setTimeout(one, 20);
    });
  };
  for (let i = 0; i < wanted; i++) one();
  return {
    open: () => open.size,
    /** Connections closed so far (by the server, while the flood runs). */
    closed: () => closed,
    /** No connection is still connecting: every one is open or gone. */
    settled: () => all.size === open.size,
    connecting: () => all.size - open.size,
    /** The status line each open connection gets for one request (or why none came). */
    ask: (): Promise<string[]> => Promise.all([...open].map((s) => statusLine(s))),
    /** Opens nothing more; connections still being established are abandoned (they hold nothing yet). */
    stop(): void {
      running = false;
      for (const s of all) if (!open.has(s)) s.destroy();
    },
    destroy(): void {
      running = false;
      for (const s of all) s.destroy();
    },
  };
}

/** One request on a new connection from `from`: the status, or the error's code. */
function getFrom(port: number, from: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', localAddress: from, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

for (const workers of [0, 2]) {
  test(`one address cannot take the REST connection cap (${workers === 0 ? 'REST on the main thread' : `${workers} REST workers`})`, {
    timeout: 60_000,
  }, async (t) => {
    const s = await startTestServices({ workers, restMaxConnections: CAP, restMaxConnectionsPerAddress: PER_ADDRESS });
    t.after(() => s.close());
    const port = s.services.restPort;
    // A client without keep-alive opens and closes far more connections than the limit, one at a time.
    const sequential: Array<number | string> = [];
    for (let i = 0; i < 4 * PER_ADDRESS; i++) sequential.push(await getFrom(port, '127.0.0.4'));
    assert.deepEqual(sequential, Array(4 * PER_ADDRESS).fill(200), 'a client holding one connection at a time is never refused');

    const attack = flood(port, '127.0.0.2', FLOOD);
    t.after(() => attack.destroy());
    // The flood is at the cap once the server has refused as many connections as it wanted beyond its share.
    await eventually('the server refuses the flood past its share', () => attack.closed() >= FLOOD - PER_ADDRESS, 15_000);

    const answers: Array<number | string> = [];
    for (let i = 0; i < 20; i++) answers.push(await getFrom(port, '127.0.0.3'));
    assert.deepEqual(answers, Array(20).fill(200), 'the other client is served during the flood');

    attack.stop();
    // Stopped, the flood opens nothing more: what it holds only falls as its refused connections close.
    await eventually(
      () =>
        `the flood holds at most its ${PER_ADDRESS} connections once its refused ones are closed (open ${attack.open()}, still connecting ${attack.connecting()})`,
      () => attack.settled() && attack.open() <= PER_ADDRESS,
      10_000,
    );
    const held = attack.open();
    assert.ok(held <= PER_ADDRESS, `the flood holds ${held} connections, at most its ${PER_ADDRESS}`);
    assert.ok(held >= PER_ADDRESS / 2, `the flood keeps a share (${held}): the limit is per address, not a ban`);

    // Closes are counted: once the flood's connections are gone, the address gets its whole share back.
    attack.destroy();
    const again = flood(port, '127.0.0.2', PER_ADDRESS);
    t.after(() => again.destroy());
    // A connection is open for the client once the kernel has completed it, before the server has
    // admitted it: only an answer on each proves the share. A refused one is reconnected until then.
    let last: string[] = [];
    await eventually(
      () => `the address gets its whole share again, each connection served (last answers: ${JSON.stringify(last)})`,
      async () => {
        if (!again.settled() || again.open() !== PER_ADDRESS) return false;
        last = await again.ask();
        return last.every((line) => line === 'HTTP/1.1 200 OK') && again.open() === PER_ADDRESS;
      },
      15_000,
    );
  });
}
