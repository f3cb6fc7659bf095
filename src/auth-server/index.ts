/**
 * @module The embedded OAuth 2.1 authorization server's public surface: start it, and the account
 * helpers it shares with tests and tooling. Everything else in this folder is internal.
 */
export { OAUTH_SCOPES } from '../policy/oauth-scopes.ts';
export { startAuthServer, DEFAULT_ACCESS_TOKEN_TTL_SECONDS } from './server.ts';
export { DEFAULT_SCOPE } from './authorization-query.ts';
export { LIFETIMES, ROUTES } from './provider-config.ts';
export type { AuthServer, AuthServerOptions } from './server.ts';
export { hashPassword, verifyPassword, SCRYPT_PARAMS } from './passwords.ts';
export { createUser, findUserByEmail, normalizeEmail, SignupError, MIN_PASSWORD_LENGTH } from './users.ts';
export { SECRETS_FILE } from './secrets.ts';
export { OAUTH_FILE } from './lmdb-adapter.ts';
