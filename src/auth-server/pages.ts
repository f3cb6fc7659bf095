/**
 * @module The HTML the authorization server shows people: the log-in / sign-up page, the consent
 * page for an already signed-in browser, and error pages.
 *
 * Plain server-rendered forms with no script and no external assets (fonts, CSS, images): the page
 * works in any browser an MCP client may open, including locked-down ones, and the Content-Security-
 * Policy can forbid everything except inline style. Accessibility: one <h1>, a <section> with a
 * heading per form, explicit <label for>, autocomplete tokens so password managers fill the right
 * fields, errors in role="alert" and tied to the fields with aria-describedby.
 *
 * Every interpolated value goes through `escapeHtml`: client names and redirect hosts come from
 * dynamic client registration, i.e. from anyone.
 */

export const SERVICE_NAME = 'Health Plan Data';

/** Headers for every page: no caching of forms or errors, no framing (clickjacking of the forms). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // No form-action directive: browsers apply it to the redirect chain after a submit, which ends at
  // the client's own redirect_uri on any origin.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'",
});

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#f6f7f9;--card:#fff;--muted:#57606a;--accent:#0b57d0;--err:#b3261e;--line:#d0d7de}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--card:#161b22;--muted:#9da7b3;--accent:#7aa7ff;--err:#ff8a80;--line:#30363d}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:28rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .5rem}
h2{font-size:1.15rem;margin:0 0 .75rem}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1.25rem;margin:1rem 0}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{width:100%;font:inherit;padding:.55rem .65rem;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg)}
input:focus,button:focus{outline:3px solid var(--accent);outline-offset:2px}
button{font:inherit;font-weight:600;margin-top:1rem;padding:.6rem 1rem;border:0;border-radius:6px;background:var(--accent);color:#fff;cursor:pointer;width:100%}
button.secondary{background:transparent;color:var(--accent);border:1px solid var(--line)}
.hint,.client{color:var(--muted)}
.error{color:var(--err);font-weight:600;margin:.5rem 0 0}
`;

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} – ${SERVICE_NAME}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** Which form an error message belongs to, so it is shown (and announced) next to that form. */
export type FormName = 'login' | 'signup' | 'consent';

export interface InteractionPageOptions {
  uid: string;
  /** The client's registered name, or its id when it registered none. */
  clientLabel: string;
  /** Host the browser returns to afterwards (from redirect_uri), so people can spot an impostor. */
  returnHost: string | undefined;
  /** Set when the browser is already signed in and only consent is missing. */
  signedInAs?: string;
  error?: { form: FormName; message: string };
  /** Re-filled after an error so people do not retype it (never the password). */
  email?: { form: 'login' | 'signup'; value: string };
}

function errorFor(opts: InteractionPageOptions, form: FormName): { html: string; describedBy: string } {
  if (opts.error?.form !== form) return { html: '', describedBy: '' };
  const id = `${form}-error`;
  return {
    html: `<p class="error" role="alert" id="${id}">${escapeHtml(opts.error.message)}</p>`,
    describedBy: ` aria-describedby="${id}" aria-invalid="true"`,
  };
}

/**
 * The interaction page: a consent section when the browser is already signed in, then "Log in" and
 * "Create an account", then a way to cancel.
 */
export function renderInteractionPage(opts: InteractionPageOptions): string {
  const base = `/interaction/${encodeURIComponent(opts.uid)}`;
  const client = escapeHtml(opts.clientLabel);
  const back = opts.returnHost === undefined ? '' : ` You will then return to <strong>${escapeHtml(opts.returnHost)}</strong>.`;
  const emailValue = (form: 'login' | 'signup'): string => (opts.email?.form === form ? ` value="${escapeHtml(opts.email.value)}"` : '');
  // Focus lands where the person has to act: the form with the error, else the first form.
  const focusForm: FormName = opts.error?.form ?? (opts.signedInAs !== undefined ? 'consent' : 'login');
  const autofocus = (form: FormName): string => (focusForm === form ? ' autofocus' : '');

  const consentError = errorFor(opts, 'consent');
  const consent =
    opts.signedInAs === undefined
      ? ''
      : `<section aria-labelledby="consent-heading">
<h2 id="consent-heading">Continue as ${escapeHtml(opts.signedInAs)}</h2>
<p><strong>${client}</strong> will be able to use ${SERVICE_NAME} with your account and your plan's limits.</p>
${consentError.html}
<form method="post" action="${base}/confirm">
<button type="submit"${autofocus('consent')}>Allow</button>
</form>
</section>
<p>Or use a different account:</p>`;

  const loginError = errorFor(opts, 'login');
  const signupError = errorFor(opts, 'signup');
  const body = `<h1>${opts.signedInAs === undefined ? 'Sign in to' : 'Connect to'} ${SERVICE_NAME}</h1>
<p class="client"><strong>${client}</strong> is asking to connect to your ${SERVICE_NAME} account.${back}</p>
${consent}
<section aria-labelledby="login-heading">
<h2 id="login-heading">Log in</h2>
<form method="post" action="${base}/login">
<label for="login-email">E-mail</label>
<input id="login-email" name="email" type="email" autocomplete="username" required maxlength="254"${emailValue('login')}${loginError.describedBy}${autofocus('login')}>
<label for="login-password">Password</label>
<input id="login-password" name="password" type="password" autocomplete="current-password" required${loginError.describedBy}>
${loginError.html}
<button type="submit">Log in</button>
</form>
</section>
<section aria-labelledby="signup-heading">
<h2 id="signup-heading">Create an account</h2>
<form method="post" action="${base}/signup">
<label for="signup-email">E-mail</label>
<input id="signup-email" name="email" type="email" autocomplete="email" required maxlength="254"${emailValue('signup')}${signupError.describedBy}${autofocus('signup')}>
<label for="signup-password">Password</label>
<input id="signup-password" name="password" type="password" autocomplete="new-password" required minlength="8" aria-describedby="signup-hint">
<p class="hint" id="signup-hint">At least 8 characters.</p>
<label for="signup-confirm">Confirm password</label>
<input id="signup-confirm" name="confirm" type="password" autocomplete="new-password" required minlength="8">
${signupError.html}
<button type="submit">Create account</button>
</form>
<p class="hint">New accounts start on the Free plan.</p>
</section>
<form method="post" action="${base}/abort">
<button type="submit" class="secondary">Cancel and go back to ${client}</button>
</form>`;
  return layout(opts.signedInAs === undefined ? 'Sign in' : 'Connect', body);
}

/** A full error page: what happened in words, what to do next, and the OAuth code for support. */
export function renderErrorPage(opts: { title: string; message: string; code?: string; description?: string }): string {
  const details =
    opts.code === undefined
      ? ''
      : `<p class="hint">Error code: <code>${escapeHtml(opts.code)}</code>${opts.description === undefined ? '' : ` — ${escapeHtml(opts.description)}`}</p>`;
  return layout(
    opts.title,
    `<h1>${escapeHtml(opts.title)}</h1>
<section>
<p>${escapeHtml(opts.message)}</p>
${details}
</section>`,
  );
}

/**
 * The page shown instead of redirecting an authorization error to a dynamically registered client
 * (error-redirects.ts): who asked, what was refused, and a deliberate click to go back to them.
 */
export function renderRefusedRequestPage(opts: {
  clientLabel: string;
  /** The origin the client wanted the browser back at; undefined when it named no usable one. */
  origin: string | undefined;
  code: string;
  description: string | undefined;
  continueTo: { method: 'get'; href: string } | { method: 'post'; action: string; fields: Array<[string, string]> } | undefined;
}): string {
  const client = escapeHtml(opts.clientLabel);
  const where = opts.origin === undefined ? '' : ` at <strong>${escapeHtml(opts.origin)}</strong>`;
  const reason = escapeHtml(opts.description ?? opts.code);
  let next = '<p>You can close this page.</p>';
  if (opts.continueTo !== undefined && opts.origin !== undefined) {
    const label = `Continue to ${escapeHtml(opts.origin)}`;
    next =
      opts.continueTo.method === 'get'
        ? `<p><a id="continue" href="${escapeHtml(opts.continueTo.href)}" rel="noreferrer">${label}</a></p>`
        : `<form method="post" action="${escapeHtml(opts.continueTo.action)}">
${opts.continueTo.fields.map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('\n')}
<button type="submit" id="continue">${label}</button>
</form>`;
    next = `<p class="hint">Only continue if you trust this address: ${SERVICE_NAME} does not vouch for it.</p>\n${next}`;
  }
  return layout(
    'Request refused',
    `<h1>Request refused</h1>
<section>
<p>The application <strong>${client}</strong>${where} asked to connect to your ${SERVICE_NAME} account, and the request was refused: ${reason}.</p>
<p class="hint">Error code: <code>${escapeHtml(opts.code)}</code></p>
${next}
</section>`,
  );
}
