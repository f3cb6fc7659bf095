/**
 * @module What the REST front's framing check costs each request (src/http/rest-front.ts): the two
 * header lookups every request pays, by bytes and by strings, next to the walk over every field that
 * only a request carrying Content-Length or Transfer-Encoding pays. Measured inside a real uWS handler
 * (a request is valid only there), on a request with the nine fields a browser behind a proxy sends;
 * each figure is the best of 25 rounds of 200,000 calls, so other load on the machine shows less.
 *
 *   node --import ./bin/register-typescript.js bench/framing-check.bench.ts
 */
import { connect } from 'node:net';
import { uws, type HttpRequest } from '../src/http/uws.ts';

const CALLS = 200_000;
const ROUNDS = 25;
const TE = Buffer.from('transfer-encoding');
const CL = Buffer.from('content-length');

const CASES: ReadonlyArray<readonly [string, (req: HttpRequest) => number]> = [
  ['two lookups, names as bytes (the check)', (req) => (req.getHeader(TE) !== '' || req.getHeader(CL) !== '' ? 1 : 0)],
  ['two lookups, names as strings', (req) => (req.getHeader('transfer-encoding') !== '' || req.getHeader('content-length') !== '' ? 1 : 0)],
  [
    'forEach over every field',
    (req) => {
      let hosts = 0;
      req.forEach((name) => {
        if (name === 'host') hosts++;
      });
      return hosts;
    },
  ],
  ['nothing (loop overhead)', () => 0],
];

const REQUEST = [
  'GET /v1/health/plans?zip=77002&age=40 HTTP/1.1',
  'Host: api.example.com',
  'User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36',
  'Accept: application/json',
  'Accept-Encoding: gzip, deflate, br',
  'Authorization: Bearer hpd_live_0123456789abcdef0123456789abcdef',
  'X-Request-Id: 5b2c1f0e-aaaa-bbbb-cccc-0123456789ab',
  'X-Forwarded-For: 203.0.113.7',
  'Connection: keep-alive',
  '',
  '',
].join('\r\n');

const app = uws.App();
app.any('/*', (res, req) => {
  res.onAborted(() => {});
  const best = new Map<string, number>();
  let sink = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, f] of CASES) {
      const t0 = performance.now();
      for (let i = 0; i < CALLS; i++) sink += f(req);
      best.set(name, Math.min(best.get(name) ?? Number.POSITIVE_INFINITY, ((performance.now() - t0) * 1e6) / CALLS));
    }
  }
  for (const [name, ns] of best) process.stdout.write(`${name}: ${ns.toFixed(0)} ns per request\n`);
  // Read once so no round can be optimised away.
  if (sink < 0) process.stdout.write('unreachable\n');
  res.cork(() => res.end('ok'));
});
app.listen('127.0.0.1', 0, (token) => {
  if (token === false) throw new Error('could not listen');
  const socket = connect(uws.us_socket_local_port(token), '127.0.0.1', () => socket.write(REQUEST));
  socket.on('data', () => {
    socket.destroy();
    app.close();
  });
});
