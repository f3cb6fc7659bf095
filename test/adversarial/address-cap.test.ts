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
import { startTestServices } from '../helpers/services.ts';

const CAP = 150;
const PER_ADDRESS = 40;
const FLOOD = 200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Keeps `wanted` connections from `from` open, reconnecting 20 ms after each close, until stopped. */
function flood(port: number, from: string, wanted: number) {
  const open = new Set<Socket>();
  const all = new Set<Socket>();
  let running = true;
  const one = (): void => {
    const s = connect({ port, host: '127.0.0.1', localAddress: from });
    all.add(s);
    s.on('error', () => {});
    s.on('connect', () => open.add(s));
    s.on('close', () => {
      open.delete(s);
      all.delete(s);
      if (running) setTimeout(one, 20);
    });
  };
  for (let i = 0; i < wanted; i++) one();
  return {
    open: () => open.size,
    stop(): void {
      running = false;
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
    await sleep(1_500);

    const answers: Array<number | string> = [];
    for (let i = 0; i < 20; i++) answers.push(await getFrom(port, '127.0.0.3'));
    assert.deepEqual(answers, Array(20).fill(200), 'the other client is served during the flood');

    attack.stop();
    await sleep(500);
    const held = attack.open();
    assert.ok(held <= PER_ADDRESS, `the flood holds ${held} connections, at most its ${PER_ADDRESS}`);
    assert.ok(held >= PER_ADDRESS / 2, `the flood keeps a share (${held}): the limit is per address, not a ban`);

    // Closes are counted: once the flood's connections are gone, the address gets its whole share back.
    attack.destroy();
    await sleep(500);
    const again = flood(port, '127.0.0.2', PER_ADDRESS);
    t.after(() => again.destroy());
    await sleep(1_500);
    again.stop();
    await sleep(300);
    assert.equal(again.open(), PER_ADDRESS, 'the address opens its whole share again');
  });
}
