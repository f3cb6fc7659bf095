/**
 * endWithBody against a stand-in for uWS's HttpResponse that takes a limited number of bytes per
 * write, as a socket with a full send buffer does: the body must arrive whole and in order across
 * writable events, without being copied up front. (The real uWS paths are in test/adversarial.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endWithBody, pendingResponses } from '../../src/http/response-writer.ts';
import type { HttpResponse } from '../../src/http/uws.ts';

class ThrottledResponse {
  readonly sent: Buffer[] = [];
  offset = 0;
  writable: ((offset: number) => boolean) | null = null;
  done = false;
  ended: 'end' | 'tryEnd' | null = null;
  readonly perWrite: number;
  constructor(perWrite: number) {
    this.perWrite = perWrite;
  }
  tryEnd(chunk: Buffer, total: number): [boolean, boolean] {
    this.ended = 'tryEnd';
    const n = Math.min(this.perWrite, chunk.byteLength);
    this.sent.push(Buffer.from(chunk.subarray(0, n)));
    this.offset += n;
    this.done = this.offset === total;
    return [n === chunk.byteLength, this.done];
  }
  aborted: (() => void) | null = null;
  onAborted(handler: () => void): this {
    this.aborted = handler;
    return this;
  }
  onWritable(handler: (offset: number) => boolean): this {
    this.writable = handler;
    return this;
  }
  end(chunk: Buffer): this {
    this.ended = 'end';
    this.sent.push(Buffer.from(chunk));
    this.done = true;
    return this;
  }
  /** The socket drained: uWS calls the writable handler with the body offset. */
  drain(): boolean {
    return this.writable!(this.offset);
  }
}

test('a body larger than the socket takes arrives whole, in order, over writable events', () => {
  const body = Buffer.from(Array.from({ length: 100_000 }, (_, i) => i % 251));
  const res = new ThrottledResponse(16_384);
  endWithBody(res as unknown as HttpResponse, body);
  assert.equal(res.done, false);
  let events = 0;
  while (!res.done && events < 100) {
    res.drain();
    events++;
  }
  assert.equal(res.done, true);
  assert.equal(events, 6);
  assert.ok(Buffer.concat(res.sent).equals(body));
});

test('a body the socket takes at once needs no writable handler', () => {
  const res = new ThrottledResponse(1 << 20);
  endWithBody(res as unknown as HttpResponse, Buffer.from('{"ok":true}'));
  assert.equal(res.done, true);
  assert.equal(res.writable, null);
});

test('a body still being written counts as pending until it is sent whole or its client goes away', () => {
  const body = Buffer.alloc(50_000, 7);
  const before = pendingResponses();
  const sent = new ThrottledResponse(16_384);
  const dropped = new ThrottledResponse(16_384);
  endWithBody(sent as unknown as HttpResponse, body);
  endWithBody(dropped as unknown as HttpResponse, body);
  assert.equal(pendingResponses(), before + 2);
  while (!sent.done) sent.drain();
  assert.equal(pendingResponses(), before + 1);
  dropped.aborted!();
  dropped.aborted!();
  assert.equal(pendingResponses(), before);
});
