/**
 * @module The OAuth scopes of this service: what the authorization server grants and what the MCP
 * server advertises in its protected-resource metadata and challenges. One list, so they cannot differ.
 */
export const OAUTH_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
