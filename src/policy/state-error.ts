/**
 * @module Stored state that cannot be used as it is: a damaged file in HPD_STATE_DIR or a damaged or
 * vanished value in Redis (the auth secrets), or a record that kept changing under an update. The CLI
 * prints the message as one line and exits 1; the message says what to do. Its own module so the CLI
 * recognises it without loading the stores.
 */
export class StateError extends Error {
  override name = 'StateError';
}
