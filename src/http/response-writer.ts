/**
 * @module Ending uWebSockets.js responses safely whatever the client does.
 *
 * Two rules of uWS decide whether a misbehaving client can hurt the process:
 *
 * - A handler that returns while its response is still pending (not every byte handed to the kernel)
 *   and that has no abort handler makes uWS call `std::terminate()`: the whole process dies. A request
 *   followed at once by a TCP reset did exactly that for any response larger than uWS's 16 KiB cork
 *   buffer. Every handler therefore registers {@link ignoreAbort} before it writes anything; our
 *   handlers never await, so there is nothing to cancel when a client goes away.
 * - `res.end(body)` copies whatever the socket does not take at once into uWS's per-connection
 *   backpressure buffer and marks the response done, so a client that pipelines requests and never reads
 *   made the process buffer every response (10 such connections: +800 MB). Bodies are written with
 *   `tryEnd` instead: the kernel takes what fits, and while the rest is pending uWS closes the
 *   connection if another request arrives on it ("no async pipelining"). A connection thus holds at most
 *   one unsent response; one that stops reading is closed by uWS's 10 s send timeout.
 * - uWS keeps **no copy** of what a `tryEnd` could not send: `onWritable` must send the rest from bytes
 *   that are still the response's. Search and compare bodies are views of a serializer's scratch buffer,
 *   reused by the next response of the route, so a page finished late was spliced with other pages'
 *   bytes (every time, over a real link: test/http/partial-write.test.ts). A pending write therefore
 *   copies its body once, when the kernel first refuses part of it; most responses never do.
 */
import type { HttpResponse } from './uws.ts';

/** The abort handler of every response: nothing to cancel, its registration is what keeps uWS alive. */
export function ignoreAbort(): void {
  // Handlers are synchronous; a pending write is dropped with its socket.
}

/** Responses of this thread whose body the kernel has not taken whole yet. */
let pendingWrites = 0;

/**
 * Bodies of this thread still being written to slow readers: a shutdown waits for these before it
 * closes the connections (src/http/server.ts), so no response in flight is cut.
 */
export function pendingResponses(): number {
  return pendingWrites;
}

/** Ends `res` with `body` (inside a cork, after status and headers). */
export function endWithBody(res: HttpResponse, body: Buffer): void {
  const total = body.byteLength;
  const [, done] = res.tryEnd(body, total);
  if (done) return;
  // Copied now, in the turn that wrote the first part, before any other response can reuse the buffer
  // `body` views (the whole body: offsets stay uWS's, the body bytes sent so far, as before).
  const owned = Buffer.from(body);
  pendingWrites++;
  let settled = false;
  const settle = (): void => {
    if (settled) return;
    settled = true;
    pendingWrites--;
  };
  res.onAborted(settle);
  res.onWritable((offset) => {
    const [ok, finished] = res.tryEnd(owned.subarray(offset), total);
    if (finished) settle();
    return ok;
  });
}
