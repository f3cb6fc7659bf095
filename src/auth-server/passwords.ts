/**
 * @module Password hashing for the login page: scrypt (memory-hard, in node:crypto, no dependency),
 * stored as the self-describing string `scrypt$N$r$p$saltB64$hashB64`.
 *
 * The cost parameters travel with each hash so they can be raised later without invalidating stored
 * passwords (a login under new parameters can simply re-hash). N = 2^15, r = 8, p = 1 costs 32 MiB and
 * roughly 50–100 ms per hash: high enough to make offline guessing expensive, low enough that a burst
 * of concurrent logins on one server does not exhaust memory (2^17, OWASP's figure, costs 128 MiB each;
 * login-throttle.ts bounds how many guesses per account and address get this far).
 *
 * Passwords are NFC-normalised first, so the same typed password matches whether the browser or OS
 * composed accents or not (RFC 8265's OpaqueString profile does the same).
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Parameters of newly created hashes. */
export const SCRYPT_PARAMS = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

const SALT_BYTES = 16;
const KEY_BYTES = 32;
/**
 * Upper bounds accepted when verifying, so a tampered or corrupt stored hash cannot make one login
 * allocate gigabytes or spin for minutes.
 */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

/** Longer inputs are rejected before hashing: nobody types them, and they only cost CPU. */
export const MAX_PASSWORD_LENGTH = 1024;

const HASH_PATTERN = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

function derive(password: string, salt: Buffer, keyLength: number, params: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; Node's default maxmem (32 MiB) is exactly what N=2^15, r=8 needs and
  // would reject it, so allow twice the requirement.
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/**
 * Hashes a password with a fresh random 16-byte salt.
 *
 * @example const stored = await hashPassword('correct horse'); // 'scrypt$32768$8$1$…$…'
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, SCRYPT_PARAMS);
  const { N, r, p } = SCRYPT_PARAMS;
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Checks a password against a stored hash in constant time. A malformed or out-of-bounds stored value
 * verifies as false rather than throwing: the login page must answer "wrong email or password", not
 * fail, and the operator fixes the record.
 *
 * @example await verifyPassword('correct horse', stored) // true
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = HASH_PATTERN.exec(stored);
  if (m === null) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const powerOfTwo = N >= 2 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_N || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return false;
  const salt = Buffer.from(m[4], 'base64');
  const expected = Buffer.from(m[5], 'base64');
  if (salt.length === 0 || expected.length < 16 || expected.length > 64) return false;
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const actual = await derive(password, salt, expected.length, { N, r, p });
  return timingSafeEqual(actual, expected);
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the same time as a real verification and returns false. Used when the e-mail address is
 * unknown, so response timing does not reveal which addresses have accounts.
 */
export async function verifyNothing(password: string): Promise<false> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await dummyHash);
  return false;
}
