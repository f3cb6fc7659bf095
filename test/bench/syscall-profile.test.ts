/**
 * bench/lib/syscall-profile.ts: strace's `-c` table and its per-call lines of the send family read as
 * strace 6.1 writes them, then the whole profile taken with the real strace attached to a small
 * two-thread server in a child process, whose responses have a known size.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, test } from 'node:test';
import { parseSendTrace, parseStraceSummary, syscallProfile } from '../../bench/lib/syscall-profile.ts';

/** `strace -c -f -p PID -o FILE` of a node server after 100 requests (strace 6.1). */
const SUMMARY = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 89.00    0.002217          20       109           epoll_pwait
  7.91    0.000197           1       100           write
  2.57    0.000064           0       101        12 read
  0.20    0.000005           5         1           shutdown
  0.12    0.000003           3         1           close
  0.08    0.000002           2         1           epoll_ctl
  0.08    0.000002           2         1           io_uring_enter
  0.04    0.000001           1         1         1 accept4
------ ----------- ----------- --------- --------- ----------------
100.00    0.002491           7       315        13 total
`;

/** `strace -f -y -s 0 -e trace=write,writev,sendto,sendmsg -e signal=none -p PID -o FILE`. */
const SENDS = `10922 write(28<socket:[5465524]>, ""..., 40) = 40
10922 writev(28<socket:[5465524]>, [{iov_base=""..., iov_len=100}, {iov_base=""..., iov_len=2000}], 2) = 2100
10925 write(9<anon_inode:[eventfd]>, ""..., 8) = 8
10925 sendto(31<socket:[5465530]>, ""..., 16384, MSG_NOSIGNAL|MSG_DONTWAIT, NULL, 0) = 1000
10922 write(1<pipe:[5465001]>, ""..., 120) = 120
10925 sendto(31<socket:[5465530]>, ""..., 15384, MSG_NOSIGNAL|MSG_DONTWAIT, NULL, 0) = -1 EAGAIN (Resource temporarily unavailable)
10926 writev(33<socket:[5465540]>, [{iov_base=""..., iov_len=300}], 1 <unfinished ...>
10922 write(28<socket:[5465524]>, ""..., 40 <unfinished ...>
10926 <... writev resumed>) = 300
10922 <... write resumed>) = 40
10930 +++ exited with 0 +++
`;

describe('reading strace', () => {
  it('reads every row of the -c table by its columns, blank errors included, and the total apart', () => {
    const s = parseStraceSummary(SUMMARY);
    assert.equal(s.total, 315);
    assert.equal(s.rows.length, 8);
    assert.deepEqual(s.rows[0], { name: 'epoll_pwait', calls: 109, errors: 0 });
    assert.deepEqual(s.rows[2], { name: 'read', calls: 101, errors: 12 });
    assert.deepEqual(s.rows[7], { name: 'accept4', calls: 1, errors: 1 });
  });

  it('refuses text without a -c table', () => {
    assert.throws(() => parseStraceSummary('strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n'), /no strace -c table/);
  });

  it('sums the bytes the kernel accepted on sockets, split calls joined by thread, other writes apart', () => {
    assert.deepEqual(parseSendTrace(SENDS), {
      socketCalls: 6,
      socketBytes: 40 + 2100 + 1000 + 300 + 40,
      failed: 1,
      otherCalls: 2,
      otherBytes: 128,
    });
  });
});

/** A server in a child process, two threads writing: each answer to a line is RESPONSE_BYTES bytes. */
const RESPONSE_BYTES = 1000;
const SERVER = `
const { Worker } = require('node:worker_threads');
new Worker('setInterval(() => {}, 1000)', { eval: true });
const body = 'x'.repeat(${RESPONSE_BYTES});
const server = require('node:net').createServer((c) => c.on('data', () => c.write(body)));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

/** \`n\` requests one after the other on one connection; resolves with n. */
function requests(port: number, n: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let done = 0;
    let received = 0;
    const c = connect(port, '127.0.0.1', () => c.write('?'));
    c.on('error', reject);
    c.on('data', (d) => {
      received += d.length;
      if (received < RESPONSE_BYTES) return;
      received -= RESPONSE_BYTES;
      if (++done < n) c.write('?');
      else {
        c.end();
        resolve(done);
      }
    });
  });
}

test('syscallProfile counts the syscalls, sends and bytes per request of a real server under the real strace', {
  timeout: 60_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-syscall-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => server.kill('SIGKILL'));
  const port = await new Promise<number>((resolve, reject) => {
    server.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  const p = await syscallProfile({ pid: server.pid!, load: () => requests(port, 200), countSeconds: 1, sendSeconds: 1, dir });
  assert.ok(!('unavailable' in p), `strace traced the server: ${JSON.stringify(p)}`);
  assert.equal(p.countRequests, 200);
  assert.equal(p.sendRequests, 200);
  // Each request: at least its read and its write; each response one write of its whole size.
  assert.ok(p.syscalls >= 2, `syscalls per request: ${p.syscalls}`);
  assert.ok(
    p.top.some((x) => x.name === 'write' && x.perRequest >= 1),
    JSON.stringify(p.top),
  );
  assert.equal(p.bytes, RESPONSE_BYTES);
  assert.equal(p.sendCalls, 1);
  assert.equal(p.failedSends, 0);
});

test('syscallProfile says why when there is nothing to attach to', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-syscall-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let loaded = false;
  const p = await syscallProfile({
    pid: 2 ** 22 + 1,
    load: async () => {
      loaded = true;
      return 1;
    },
    countSeconds: 1,
    sendSeconds: 1,
    dir,
  });
  assert.ok('unavailable' in p, JSON.stringify(p));
  assert.match(p.unavailable, /^strace could not attach: .*No such process/);
  assert.equal(loaded, false, 'no load without a tracer');
});
