/**
 * The kernel socket table as the per-address connection limit reads it: only connections this
 * listener holds (ESTABLISHED or CLOSE_WAIT on its port, already accepted) count, and a client is one
 * key whether it arrived over IPv4 or as an IPv4-mapped IPv6 address.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressKey, countTable } from '../../src/http/socket-census.ts';

// Port 8080 = 1F90. 0100007F is 127.0.0.1 and 0200007F 127.0.0.2 as a little-endian host prints them.
const V4 = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1468 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0200007F:D2C4 01 00000000:00000000 00:00000000 00000000  1000        0 5001 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F90 0200007F:D2C5 08 00000000:00000000 00:00000000 00000000  1000        0 5002 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:1F90 0200007F:D2C6 01 00000000:00000000 00:00000000 00000000  1000        0 0 1 0000000000000000 20 4 30 10 -1
   4: 0100007F:1F90 0200007F:D2C7 06 00000000:00000000 03:00000429 00000000     0        0 0 3 0000000000000000
   5: 0100007F:1F91 0200007F:D2C8 01 00000000:00000000 00:00000000 00000000  1000        0 5003 1 0000000000000000 20 4 30 10 -1
   6: 0200007F:D2C9 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 5004 1 0000000000000000 20 4 30 10 -1
10000: 0100007F:1F90 0300007F:D2CA 01 00000000:00000000 00:00000000 00000000  1000        0 5005 1 0000000000000000 20 4 30 10 -1
`;
const V6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 0000000000000000FFFF00000200007F:D2CB 01 00000000:00000000 00:00000000 00000000  1000        0 6001 1 0000000000000000 20 4 30 10 -1
   1: 00000000000000000000000001000000:1F90 B80D0120000000000000000001000000:D2CC 01 00000000:00000000 00:00000000 00000000  1000        0 6002 1 0000000000000000 20 4 30 10 -1
`;

test('counts accepted connections held on the port, per address, over IPv4 and IPv6', () => {
  const counts = new Map<string, number>();
  countTable(V4, 8080, counts);
  countTable(V6, 8080, counts);
  assert.deepEqual(Object.fromEntries(counts), {
    // rows 1 and 2 (ESTABLISHED, CLOSE_WAIT) and the v4-mapped row of tcp6; not the listener, the
    // unaccepted row 3, TIME_WAIT, another port, or our own outgoing connection to 8080
    '127.0.0.2': 3,
    '127.0.0.3': 1,
    '20010db8000000000000000000000001': 1,
  });
});

test('a client is the same key over IPv4 and as an IPv4-mapped IPv6 address', () => {
  assert.equal(addressKey(new Uint8Array([10, 0, 0, 7])), '10.0.0.7');
  assert.equal(addressKey(new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 7])), '10.0.0.7');
  assert.equal(addressKey(new Uint8Array(16).fill(0).map((_, i) => (i === 15 ? 1 : 0))), '00000000000000000000000000000001');
});
