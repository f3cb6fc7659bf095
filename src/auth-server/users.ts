/**
 * @module Accounts created and checked by the login page, stored in the same user registry as the
 * accounts behind API keys (policy/state-store.ts), so one user id carries one tier and one daily
 * quota whichever credential is used, and `hpd users set-tier` applies to OAuth users too.
 *
 * The registry has no e-mail index: lookups scan `listUsers()`. That is a memory-map walk over a few
 * hundred bytes per user (milliseconds for tens of thousands of accounts), it needs no change to the
 * store interface that other components implement, and only the login and sign-up forms pay for it.
 * Add an index to StateStore before the user count reaches six digits.
 */
import { randomBytes } from 'node:crypto';
import type { StateStore, UserRecord } from '../policy/state-store.ts';
import { hashPassword, MAX_PASSWORD_LENGTH } from './passwords.ts';

/** Shortest accepted password (the brief's rule; NIST SP 800-63B's minimum as well). */
export const MIN_PASSWORD_LENGTH = 8;
/** RFC 5321's limit for a forward path, the longest address mail can be delivered to. */
export const MAX_EMAIL_LENGTH = 254;

/** Deliberately loose: one '@', something on each side, a dot in the domain, no spaces. */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Why a sign-up was refused; `message` is shown to the person on the page. */
export const SIGNUP_ERRORS = {
  'invalid-email': 'Enter a valid e-mail address.',
  'password-too-short': `Use a password of at least ${MIN_PASSWORD_LENGTH} characters.`,
  'password-too-long': `Use a password of at most ${MAX_PASSWORD_LENGTH} characters.`,
  'email-taken': 'An account with this e-mail address already exists. Log in instead.',
} as const;

export type SignupErrorCode = keyof typeof SIGNUP_ERRORS;

export class SignupError extends Error {
  readonly code: SignupErrorCode;
  constructor(code: SignupErrorCode) {
    super(SIGNUP_ERRORS[code]);
    this.name = 'SignupError';
    this.code = code;
  }
}

/**
 * The form of an address used for storage and comparison: trimmed and lower-cased. Lower-casing the
 * local part is technically lossy (RFC 5321 lets servers treat it case-sensitively) but no mainstream
 * provider does, and it stops "Ann@x.org" and "ann@x.org" becoming two accounts.
 */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isValidEmail(normalized: string): boolean {
  return normalized.length <= MAX_EMAIL_LENGTH && EMAIL_PATTERN.test(normalized);
}

/** Length in code points, so an emoji counts as one character as a person would count it. */
function passwordLength(password: string): number {
  return [...password].length;
}

/** The user whose (normalised) e-mail is `email`, if any. */
export function findUserByEmail(store: StateStore, email: string): UserRecord | undefined {
  const wanted = normalizeEmail(email);
  return store.listUsers().find((u) => u.email === wanted);
}

/**
 * Serialises sign-ups per store in this process: the duplicate check and the insert are two steps,
 * and two simultaneous sign-ups with one address must not both pass the check. (Only this server
 * creates users with an e-mail; the CLI never does, so no other process races.)
 */
const signupQueues = new WeakMap<StateStore, Promise<unknown>>();

/**
 * Creates a Free user with an e-mail and a password: id 'usr_' + 16 hex, e-mail normalised, password
 * hashed with scrypt.
 *
 * @throws SignupError for an invalid address, a password outside the length bounds, or an address
 *   that already has an account.
 * @example const user = await createUser(store, 'ann@example.org', 'correct horse', Date.now());
 */
export async function createUser(store: StateStore, email: string, password: string, now: number): Promise<UserRecord> {
  const normalized = normalizeEmail(email);
  if (!isValidEmail(normalized)) throw new SignupError('invalid-email');
  const length = passwordLength(password);
  if (length < MIN_PASSWORD_LENGTH) throw new SignupError('password-too-short');
  if (password.length > MAX_PASSWORD_LENGTH) throw new SignupError('password-too-long');

  const previous = signupQueues.get(store) ?? Promise.resolve();
  const run = previous
    .catch(() => undefined)
    .then(async () => {
      if (findUserByEmail(store, normalized) !== undefined) throw new SignupError('email-taken');
      const passwordHash = await hashPassword(password);
      const iso = new Date(now).toISOString();
      const id = `usr_${randomBytes(8).toString('hex')}`;
      let taken = false;
      const stored = await store.updateUser(id, (current) => {
        // Re-checked inside the store's atomic update: with the LMDB store this read happens under the
        // writer lock, so even a second process could not slip the same address in between.
        taken = current !== undefined || findUserByEmail(store, normalized) !== undefined;
        if (taken) return undefined;
        return { id, tier: 'free', created_at: iso, updated_at: iso, email: normalized, password_hash: passwordHash };
      });
      if (taken || stored === undefined) throw new SignupError('email-taken');
      return stored;
    });
  signupQueues.set(store, run);
  return run;
}
