/**
 * @module The only module that touches the native uWebSockets.js package.
 *
 * Which of the two installed builds loads is decided by the Node major (src/http/uws-build.ts says why);
 * a runtime none of them can serve stops the start with one line naming the Node, the glibc and what to
 * do (UnsupportedRuntimeError), not with the loader's stack.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type * as Uws from 'uws-legacy';
import { ListenError, probeListenError } from './listen-error.ts';
import { UnsupportedRuntimeError } from './unsupported-runtime-error.ts';
import { currentRuntime, UWS_BUILDS, unsupportedNodeMessage, uwsLoadFailureMessage } from './uws-build.ts';

const require = createRequire(import.meta.url);
const PACKAGE = UWS_BUILDS.get(Number(process.versions.node.split('.')[0]));
if (PACKAGE === undefined) throw new UnsupportedRuntimeError(unsupportedNodeMessage(currentRuntime()));

/**
 * Largest request header block uWS accepts, read by the native module once when it loads. Its default
 * (4 KiB) is too small for a JWT plus proxy headers, and uWS answers a larger block itself with an HTML
 * 431 we cannot replace; 16 KiB is what nginx allows by default (4 × 8 KiB buffers, 8 KiB per line).
 * An operator's own setting wins.
 */
export const MAX_HEADERS_SIZE = 16 * 1024;
process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= String(MAX_HEADERS_SIZE);

/** The native module, typed against the older (smaller) API so code never uses 20.69-only calls. */
export const uws: typeof Uws = loadUws(PACKAGE);
export const UWS_PACKAGE: string = PACKAGE;

function loadUws(pkg: NonNullable<typeof PACKAGE>): typeof Uws {
  try {
    return require(pkg) as typeof Uws;
  } catch (error) {
    throw new UnsupportedRuntimeError(uwsLoadFailureMessage(currentRuntime(), pkg, error instanceof Error ? error.message : String(error)));
  }
}

/** Version of the loaded package, for the start-up log (its exports map hides package.json). */
export function uwsVersion(): string {
  try {
    let dir = dirname(require.resolve(PACKAGE!));
    for (let i = 0; i < 4; i++) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string; name?: string };
        if (pkg.version !== undefined) return pkg.version;
      } catch {
        // not at this level
      }
      dir = dirname(dir);
    }
  } catch {
    // fall through
  }
  return 'unknown';
}

export type HttpResponse = Uws.HttpResponse;
export type HttpRequest = Uws.HttpRequest;
export type TemplatedApp = Uws.TemplatedApp;
export type us_listen_socket = Uws.us_listen_socket;

/**
 * Listens on `host:port` exclusively — without it uWS binds with SO_REUSEPORT, and a second `hpd serve`
 * on the same port started silently and split the traffic — and rejects with a ListenError naming the
 * reason. `app.listen(host, port, options, cb)` exists in both builds at run time, but the legacy
 * typings declare options only without a host.
 */
export function listenExclusive(app: TemplatedApp, listener: string, host: string, port: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    (app as unknown as { listen(host: string, port: number, options: number, cb: (token: us_listen_socket | false) => void): void }).listen(
      host,
      port,
      LIBUS_LISTEN_EXCLUSIVE_PORT,
      (token) => {
        if (token === false) void probeListenError(host, port).then((code) => reject(new ListenError(listener, host, port, code)));
        else resolve(token);
      },
    );
  });
}

/** The module exports it as a number (1 in both builds); the typings only as an enum member. */
const LIBUS_LISTEN_EXCLUSIVE_PORT: number = (uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT;
