/**
 * @module The interaction routes: where oidc-provider sends the browser when it needs a login or a
 * consent, and where the person's answer is turned into an interaction result.
 *
 * Routes (uid = the provider's interaction id, also bound to a short-lived cookie scoped to
 * `/interaction/<uid>`):
 * - GET  /interaction/:uid          the page (log in / create an account; plus "Allow" when the
 *                                   browser is already signed in and only consent is missing)
 * - POST /interaction/:uid/login    email, password
 * - POST /interaction/:uid/signup   email, password, confirm → a new Free user
 * - POST /interaction/:uid/confirm  consent for an already signed-in browser
 * - POST /interaction/:uid/abort    cancel: the client receives error=access_denied
 *
 * Consent policy (first-party service): a person who has just typed their password on this page, which
 * names the client, has consented; the grant is created with the requested scopes and the result
 * carries login and consent together, so no second page appears. A browser that is already signed in
 * is NOT silently approved for a client it has never approved: with open dynamic registration anyone
 * can register a client with their own redirect_uri, and approving without a click would hand that
 * stranger tokens for whoever follows a link. That case shows the same page with an "Allow" button.
 *
 * CSRF: the provider's interaction cookie is SameSite=Lax, so a cross-site form POST arrives without it
 * and `interactionDetails` refuses it; no separate token is needed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors, type Grant, type Interaction, type Provider } from 'oidc-provider';
import type { StateStore } from '../policy/state-store.ts';
import type { AttemptThrottle } from './login-throttle.ts';
import type { RegistrationLimit } from './registration-limit.ts';
import { PAGE_HEADERS, renderErrorPage, renderInteractionPage, type InteractionPageOptions } from './pages.ts';
import { verifyNothing, verifyPassword } from './passwords.ts';
import { createUser, findUserByEmail, normalizeEmail, SignupError } from './users.ts';
import { clientAddress } from './client-address.ts';
import { sendUnavailablePage } from './unavailable.ts';
import { isRedisUnavailable } from '../policy/redis-failure.ts';

/** The sub-paths that accept a form POST. */
export const INTERACTION_ACTIONS = ['login', 'signup', 'confirm', 'abort'] as const;
export type InteractionAction = (typeof INTERACTION_ACTIONS)[number];

/** Matches `/interaction/<uid>` and `/interaction/<uid>/<action>`. */
export const INTERACTION_PATH = /^\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(login|signup|confirm|abort))?$/;

/** Forms are a few hundred bytes; anything bigger is not from this page. */
const MAX_FORM_BYTES = 16 * 1024;

export interface InteractionContext {
  provider: Provider;
  store: StateStore;
  /** The MCP resource identifier (access-token audience). */
  mcpResource: string;
  /** Scopes the resource server accepts (granted per resource). */
  resourceScopes: readonly string[];
  /** Scopes the provider knows (granted as OpenID scopes). */
  supportedScopes: readonly string[];
  /** Tells whether a resource indicator names the MCP resource (one trailing slash tolerated). */
  isMcpResource(indicator: string): boolean;
  clock: () => number;
  /** Back-off for the log-in and sign-up forms (login-throttle.ts). */
  throttle: AttemptThrottle;
  /** Accounts created in an hour by every address together (signup-limit.ts); null: no such limit. */
  signups: RegistrationLimit | null;
  onError(err: unknown): void;
}

/**
 * Why a request to the sign-in pages is refused: the status and the sentence shown on the error page
 * (the sign-in pages' counterpart of SIGNUP_ERRORS; these are HTML pages, not API problems).
 */
const PAGE_PROBLEMS = {
  'not-a-form': { status: 415, message: 'This address only accepts the form on the sign-in page.' },
  'form-too-large': { status: 413, message: 'The form was larger than expected.' },
  'no-client': { status: 400, message: 'The sign-in request does not name an application.' },
  'nothing-to-approve': { status: 400, message: 'There is nothing to approve on this page: log in or create an account instead.' },
  'use-the-buttons': { status: 405, message: 'Use the buttons on the sign-in page.' },
} as const;

/** Carries a PAGE_PROBLEMS entry from where it is found to the handler that renders the page. */
class HttpProblem extends Error {
  readonly status: number;
  constructor(code: keyof typeof PAGE_PROBLEMS) {
    super(PAGE_PROBLEMS[code].message);
    this.name = 'HttpProblem';
    this.status = PAGE_PROBLEMS[code].status;
  }
}

function send(res: ServerResponse, status: number, html: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...PAGE_HEADERS, ...extra, 'content-length': String(Buffer.byteLength(html)) });
  res.end(html);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new HttpProblem('not-a-form');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_FORM_BYTES) throw new HttpProblem('form-too-large');
    chunks.push(buf);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function scopeList(scope: string | undefined, allowed: readonly string[]): string[] {
  const requested = new Set((scope ?? '').split(' ').filter(Boolean));
  return allowed.filter((s) => requested.has(s));
}

function resourcesOf(interaction: Interaction, ctx: InteractionContext): string[] {
  const { resource } = interaction.params;
  const list = resource === undefined ? [ctx.mcpResource] : Array.isArray(resource) ? resource : [resource];
  // The provider has already rejected any other indicator (invalid_target); filter anyway so a grant
  // can never carry scopes for a resource this server does not serve.
  return list.filter((r) => ctx.isMcpResource(r));
}

/** Grants what the request asked for, within what this server supports. */
function addRequestedScopes(grant: Grant, interaction: Interaction, ctx: InteractionContext): void {
  const oidc = scopeList(interaction.params.scope, ctx.supportedScopes);
  if (oidc.length > 0) grant.addOIDCScope(oidc.join(' '));
  const forResource = scopeList(interaction.params.scope, ctx.resourceScopes);
  if (forResource.length > 0) {
    for (const indicator of resourcesOf(interaction, ctx)) grant.addResourceScope(indicator, forResource.join(' '));
  }
  // Whatever the consent prompt reported missing (e.g. after a client asked for more), by the provider's
  // own reckoning, so the prompt cannot come back.
  const { missingOIDCScope, missingResourceScopes } = interaction.prompt.details;
  if (missingOIDCScope !== undefined && missingOIDCScope.length > 0) grant.addOIDCScope(missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
    if (ctx.isMcpResource(indicator) && scopes.length > 0) grant.addResourceScope(indicator, scopes.join(' '));
  }
}

function clientIdOf(interaction: Interaction): string {
  const id = interaction.params.client_id;
  if (typeof id !== 'string' || id === '') throw new HttpProblem('no-client');
  return id;
}

async function pageOptions(interaction: Interaction, ctx: InteractionContext): Promise<InteractionPageOptions> {
  const clientId = clientIdOf(interaction);
  const client = await ctx.provider.Client.find(clientId);
  const redirect = typeof interaction.params.redirect_uri === 'string' ? URL.parse(interaction.params.redirect_uri) : null;
  const options: InteractionPageOptions = {
    uid: interaction.uid,
    clientLabel: client?.clientName ?? clientId,
    returnHost: redirect?.host || undefined,
  };
  if (interaction.prompt.name === 'consent' && interaction.session !== undefined) {
    const user = ctx.store.getUser(interaction.session.accountId);
    options.signedInAs = user?.email ?? interaction.session.accountId;
  }
  return options;
}

/** 429 with Retry-After: the same page again, the message next to the form that was refused. */
async function sendThrottled(
  res: ServerResponse,
  interaction: Interaction,
  ctx: InteractionContext,
  form: 'login' | 'signup',
  email: string,
  retryAfterSeconds: number,
  why = 'Too many attempts',
): Promise<void> {
  const opts = await pageOptions(interaction, ctx);
  const message = `${why}; try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`;
  send(res, 429, renderInteractionPage({ ...opts, error: { form, message }, email: { form, value: email } }), {
    'retry-after': String(retryAfterSeconds),
  });
}

async function finishWithLogin(
  req: IncomingMessage,
  res: ServerResponse,
  interaction: Interaction,
  ctx: InteractionContext,
  accountId: string,
): Promise<void> {
  // Always a fresh grant: an existing one (interaction.grantId) belongs to whoever the browser was
  // signed in as, which may be another account.
  const grant = new ctx.provider.Grant({ accountId, clientId: clientIdOf(interaction) });
  addRequestedScopes(grant, interaction, ctx);
  const grantId = await grant.save();
  await ctx.provider.interactionFinished(
    req,
    res,
    { login: { accountId, amr: ['pwd'] }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

async function finishWithConsent(
  req: IncomingMessage,
  res: ServerResponse,
  interaction: Interaction,
  ctx: InteractionContext,
): Promise<void> {
  const session = interaction.session;
  if (interaction.prompt.name !== 'consent' || session === undefined) {
    throw new HttpProblem('nothing-to-approve');
  }
  const clientId = clientIdOf(interaction);
  const existing = interaction.grantId === undefined ? undefined : await ctx.provider.Grant.find(interaction.grantId);
  const grant = existing ?? new ctx.provider.Grant({ accountId: session.accountId, clientId });
  addRequestedScopes(grant, interaction, ctx);
  const grantId = await grant.save();
  await ctx.provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

async function login(req: IncomingMessage, res: ServerResponse, interaction: Interaction, ctx: InteractionContext): Promise<void> {
  const form = await readForm(req);
  const email = form.get('email') ?? '';
  const password = form.get('password') ?? '';
  // Before anything is hashed: a refused guess must cost a Map lookup, not a scrypt run.
  const reservation = await ctx.throttle.login(normalizeEmail(email), clientAddress(req));
  if (!reservation.allowed) return sendThrottled(res, interaction, ctx, 'login', email, reservation.retryAfterSeconds);
  const { attempt } = reservation;
  try {
    const user = findUserByEmail(ctx.store, email);
    const ok = user?.password_hash !== undefined ? await verifyPassword(password, user.password_hash) : await verifyNothing(password);
    if (!ok || user === undefined) {
      attempt.failed();
      // One message for both cases: the page must not tell strangers which addresses have accounts.
      const opts = await pageOptions(interaction, ctx);
      send(
        res,
        200,
        renderInteractionPage({
          ...opts,
          error: { form: 'login', message: 'Wrong e-mail address or password.' },
          email: { form: 'login', value: email },
        }),
      );
      return;
    }
    attempt.succeeded();
    await finishWithLogin(req, res, interaction, ctx, user.id);
  } finally {
    attempt.released();
  }
}

async function signup(req: IncomingMessage, res: ServerResponse, interaction: Interaction, ctx: InteractionContext): Promise<void> {
  const form = await readForm(req);
  const email = form.get('email') ?? '';
  const password = form.get('password') ?? '';
  const confirm = form.get('confirm') ?? '';
  const reservation = await ctx.throttle.signup(clientAddress(req));
  if (!reservation.allowed) return sendThrottled(res, interaction, ctx, 'signup', email, reservation.retryAfterSeconds);
  // Taken before the form is judged, like the back-off: a refused form costs what an accepted one does.
  const full = await ctx.signups?.take(clientAddress(req) ?? 'unknown');
  if (full != null) {
    reservation.attempt.failed();
    return sendThrottled(res, interaction, ctx, 'signup', email, full.wait, 'This server is not taking new accounts right now');
  }
  // Every sign-up attempt counts, refused or not: "already exists" answers an enumeration question.
  reservation.attempt.failed();
  const fail = async (message: string): Promise<void> => {
    const opts = await pageOptions(interaction, ctx);
    send(res, 200, renderInteractionPage({ ...opts, error: { form: 'signup', message }, email: { form: 'signup', value: email } }));
  };
  if (password !== confirm) return fail('The two passwords do not match.');
  let userId: string;
  try {
    userId = (await createUser(ctx.store, email, password, ctx.clock())).id;
  } catch (err) {
    if (err instanceof SignupError) return fail(err.message);
    throw err;
  }
  await finishWithLogin(req, res, interaction, ctx, userId);
}

/**
 * Serves one interaction request. Never throws: every failure becomes an HTML page (an expired or
 * foreign interaction a 400 with advice, anything unexpected a 500 and a call to `onError`).
 */
export async function handleInteraction(
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
  action: InteractionAction | undefined,
  ctx: InteractionContext,
): Promise<void> {
  try {
    const method = req.method ?? 'GET';
    if (action === undefined && method !== 'GET' && method !== 'HEAD') throw new HttpProblem('use-the-buttons');
    if (action !== undefined && method !== 'POST') throw new HttpProblem('use-the-buttons');
    const interaction = await ctx.provider.interactionDetails(req, res);
    // The cookie names the interaction this browser started; a different uid in the path is a stale tab
    // or a link from someone else.
    if (interaction.uid !== uid) throw new errors.SessionNotFound('interaction cookie and path disagree');
    switch (action) {
      case undefined:
        send(res, 200, renderInteractionPage(await pageOptions(interaction, ctx)));
        return;
      case 'login':
        return await login(req, res, interaction, ctx);
      case 'signup':
        return await signup(req, res, interaction, ctx);
      case 'confirm':
        return await finishWithConsent(req, res, interaction, ctx);
      case 'abort':
        await ctx.provider.interactionFinished(
          req,
          res,
          { error: 'access_denied', error_description: 'End-User aborted interaction' },
          { mergeWithLastSubmission: false },
        );
        return;
    }
  } catch (err) {
    if (res.headersSent) {
      ctx.onError(err);
      res.destroy();
      return;
    }
    if (err instanceof HttpProblem) {
      send(
        res,
        err.status,
        renderErrorPage({ title: 'Cannot continue', message: err.message }),
        err.status === 405 ? { allow: action === undefined ? 'GET, HEAD' : 'POST' } : {},
      );
      return;
    }
    if (err instanceof errors.OIDCProviderError) {
      send(
        res,
        400,
        renderErrorPage({
          title: 'This sign-in page has expired',
          message:
            'It was already used, it is too old, or it was opened in another browser. Go back to your application and connect again.',
          code: err.error,
          description: err.error_description,
        }),
      );
      return;
    }
    if (isRedisUnavailable(err)) {
      sendUnavailablePage(res);
      return;
    }
    ctx.onError(err);
    send(
      res,
      500,
      renderErrorPage({
        title: 'Something went wrong',
        message: 'The sign-in could not be completed because of an error on our side. Try again in a moment.',
      }),
    );
  }
}
