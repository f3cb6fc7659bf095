/**
 * @module The running Node.js has no uWebSockets.js binary (it ships builds for some majors only, and
 * `engines` cannot say "20, 22–24 and 26" to npm precisely): the REST front cannot load, and the
 * operator must change Node, so the CLI says so in one line instead of an unexpected error.
 */
export class UnsupportedRuntimeError extends Error {
  override name = 'UnsupportedRuntimeError';
}
