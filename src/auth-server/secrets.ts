/**
 * @module The authorization server's long-lived secrets, in `<stateDir>/auth-keys.json` (mode 0600):
 * the RSA signing key(s) for access and ID tokens, and the cookie-signing secrets.
 *
 * Generated on first start and reused afterwards, so tokens issued before a restart still verify
 * against the JWKS (same `kid`) and browsers' signed session cookies stay valid. Both are arrays so
 * that rotation can later prepend a new entry while older ones keep verifying; today one of each is
 * created.
 *
 * The file is created atomically and only once: written to a temporary name, then hard-linked to the
 * final name, which fails if another process won the race; the loser reads the winner's file. A file
 * that exists but cannot be parsed is an error, never silently replaced: regenerating would log every
 * user out and invalidate every token without anyone noticing why.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { StateError } from '../policy/state-error.ts';

export const SECRETS_FILE = 'auth-keys.json';

/** The algorithm of every token this server signs (docs/compatibility.md#oauth-for-the-mcp-endpoint). */
export const SIGNING_ALG = 'RS256';

export interface AuthSecrets {
  /** Private JWKs with `kid`, `alg` and `use`; the first signs. */
  signingKeys: JWK[];
  /** Secrets for Koa's signed cookies (keygrip); the first signs. */
  cookieKeys: string[];
}

/** The stored form (file or Redis value), as JSON. */
export interface SecretsFileV1 {
  version: 1;
  signing_keys: JWK[];
  cookie_keys: string[];
}

/** Fresh secrets in their stored form: one RSA signing key, one cookie key. */
export async function generateAuthSecrets(): Promise<SecretsFileV1> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  // The RFC 7638 thumbprint as kid: stable for the key, unique in practice, nothing secret in it.
  const kid = await calculateJwkThumbprint(jwk);
  return {
    version: 1,
    signing_keys: [{ ...jwk, kid, alg: SIGNING_ALG, use: 'sig' }],
    cookie_keys: [randomBytes(32).toString('base64url')],
  };
}

function isRsaPrivateJwk(value: unknown): value is JWK {
  if (typeof value !== 'object' || value === null) return false;
  const jwk = value as Record<string, unknown>;
  return jwk.kty === 'RSA' && typeof jwk.d === 'string' && typeof jwk.n === 'string' && typeof jwk.kid === 'string';
}

/**
 * Parses and validates stored secrets; `path` names where they came from (a file path, a Redis key) in
 * the error, which is thrown rather than answered with new secrets (see the module notes).
 */
export function parseAuthSecrets(text: string, path: string): AuthSecrets {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new StateError(
      `${path} is not valid JSON (${(err as Error).message}); restore it from a backup or delete it to start over (every user will have to log in again)`,
    );
  }
  const file = data as Partial<SecretsFileV1> | null;
  const keysOk = Array.isArray(file?.signing_keys) && file.signing_keys.length > 0 && file.signing_keys.every(isRsaPrivateJwk);
  const cookiesOk =
    Array.isArray(file?.cookie_keys) &&
    file.cookie_keys.length > 0 &&
    file.cookie_keys.every((k) => typeof k === 'string' && k.length >= 16);
  if (file?.version !== 1 || !keysOk || !cookiesOk) {
    throw new StateError(`${path} does not hold version-1 auth secrets (signing_keys: RSA private JWKs with kid; cookie_keys: strings)`);
  }
  return { signingKeys: file.signing_keys ?? [], cookieKeys: file.cookie_keys ?? [] };
}

/**
 * Reads the secrets of `stateDir`, creating them on first use.
 *
 * @example const { signingKeys, cookieKeys } = await loadOrCreateAuthSecrets('var');
 */
export async function loadOrCreateAuthSecrets(stateDir: string): Promise<AuthSecrets> {
  mkdirSync(stateDir, { recursive: true });
  const path = join(stateDir, SECRETS_FILE);
  try {
    return parseAuthSecrets(readFileSync(path, 'utf8'), path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const fresh = await generateAuthSecrets();
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  // 'wx' + mode: the file is never readable by others, not even between create and chmod.
  writeFileSync(temp, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(temp);
  }
  return parseAuthSecrets(readFileSync(path, 'utf8'), path);
}
