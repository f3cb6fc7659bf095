/**
 * @module The message of a name a REST endpoint or an MCP tool does not take, written once for both
 * fronts. A bare "Unknown parameter" leaves the caller guessing; the message says what to send instead:
 * the closest known name, the names there are, or, for the few names callers send on purpose because
 * other APIs take them, why this one does not (README, "Unknown parameters are refused").
 */
import { UNKNOWN_PARAMETER } from './problems.ts';
import { isCredentialName } from './credential-names.ts';
import { suggestion } from './suggest.ts';

/** The reason given for a credential sent as a parameter. */
const CREDENTIAL_REASON = 'credentials are read only from the Authorization header (Authorization: Bearer <key>)';

/**
 * jQuery's cache-buster (`cache: false`). Refused like any other name: responses are `private, no-cache`
 * with an ETag, so a browser revalidates them anyway, and each distinct value would be a new request
 * spelling for the response cache to miss on.
 */
const CACHE_BUSTER = '_';
const CACHE_BUSTER_REASON = 'cache-busting parameters are not taken: responses are already revalidated (Cache-Control: no-cache, ETag)';

/**
 * "Unknown parameter (did you mean metal_level?)", "Unknown parameter (valid: year)", or with the
 * reason a credential or a cache-buster is refused. `known` lists the names the caller may send here;
 * `none` says so when it is empty ("this endpoint takes no query parameters").
 */
export function unknownNameMessage(given: string, known: readonly string[], none: string): string {
  if (isCredentialName(given)) return `${UNKNOWN_PARAMETER}: ${CREDENTIAL_REASON}`;
  if (given === CACHE_BUSTER) return `${UNKNOWN_PARAMETER}: ${CACHE_BUSTER_REASON}`;
  if (known.length === 0) return `${UNKNOWN_PARAMETER} (${none})`;
  return `${UNKNOWN_PARAMETER}${suggestion(given, known)}`;
}
