/**
 * @module Which uWebSockets.js build a Node.js runtime loads, and what to tell an operator when none can.
 *
 * Two builds are installed through npm aliases. `uws-legacy` (@uwsjs/core 20.51) has a Node 22 binary
 * that needs only glibc 2.27, so Node 22 — the pinned runtime — runs on Debian 12 (glibc 2.36) and
 * Ubuntu 22.04. `uws-current` (@uwsjs/core 20.69) has the Node 24 and 26 binaries, all built against
 * glibc 2.38 (Debian 13, Ubuntu 24.04); its Node 22 binary needs 2.38 too, which is why Node 22 never
 * uses it. The build is chosen by the Node major, never by trying one and falling back, so the start-up
 * line always names the build that runs. Node 20 (end of life April 2026) is no longer supported.
 */

export type UwsPackage = 'uws-legacy' | 'uws-current';

/** Node majors with a uWS build, oldest first, and the build each loads. */
export const UWS_BUILDS: ReadonlyMap<number, UwsPackage> = new Map([
  [22, 'uws-legacy'],
  [24, 'uws-current'],
  [26, 'uws-current'],
]);

/** glibc the `uws-current` binaries were linked against. */
export const CURRENT_BUILD_GLIBC = '2.38';

/** The runtime facts the advice depends on (all from `process`, passed in so the rules can be tested). */
export interface Runtime {
  readonly nodeVersion: string;
  readonly platform: string;
  readonly arch: string;
  /** glibc of the running system; undefined off glibc (macOS, musl, Windows). */
  readonly glibc: string | undefined;
}

const where = (rt: Runtime): string =>
  `Node ${rt.nodeVersion} on ${rt.platform}-${rt.arch}${rt.glibc === undefined ? '' : ` with glibc ${rt.glibc}`}`;

/** The way out that always works on this project's machines: npm scripts run the pinned Node 22. */
const VIA_NPM = 'start it through npm (`npm start`, `npx hpd …`), which runs the pinned Node 22 from package.json';

/** One line for a Node major with no build at all. */
export function unsupportedNodeMessage(rt: Runtime): string {
  return `uWebSockets.js has no build for ${where(rt)} (supported Node majors: ${[...UWS_BUILDS.keys()].join(', ')}): ${VIA_NPM}, or install a supported Node and run \`npm ci\` under it`;
}

const versionAtLeast = (have: string, want: string): boolean => {
  const [a = 0, b = 0] = have.split('.').map(Number);
  const [c = 0, d = 0] = want.split('.').map(Number);
  return a !== c ? a > c : b >= d;
};

/**
 * One line for a build that is chosen but does not load: the system's glibc is older than the binary's,
 * or its package was not installed for this Node (npm installs per-major binaries by the Node npm itself
 * runs on).
 */
export function uwsLoadFailureMessage(rt: Runtime, pkg: UwsPackage, reason: string): string {
  if (pkg === 'uws-current' && rt.glibc !== undefined && !versionAtLeast(rt.glibc, CURRENT_BUILD_GLIBC)) {
    return `uWebSockets.js's build for ${where(rt)} needs glibc ≥ ${CURRENT_BUILD_GLIBC} (Debian 13, Ubuntu 24.04): ${VIA_NPM}, or move to a system with glibc ≥ ${CURRENT_BUILD_GLIBC}`;
  }
  if (/Cannot find module|MODULE_NOT_FOUND/.test(reason)) {
    return `uWebSockets.js's binary for ${where(rt)} is not installed (npm installs the binaries of the Node it runs on): run \`npm ci\` under this Node, or ${VIA_NPM}`;
  }
  // The wrapper prefixes the loader's error with a paragraph of its own; the loader's line says more.
  const lines = reason.split('\n').map((l) => l.trim());
  const cause = lines.find((l) => l !== '' && !l.startsWith('This version of uWS.js')) ?? lines[0];
  return `uWebSockets.js could not load on ${where(rt)} (${cause}): ${VIA_NPM}`;
}

/** The facts of the running process. */
export function currentRuntime(): Runtime {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return { nodeVersion: process.version, platform: process.platform, arch: process.arch, glibc: header?.glibcVersionRuntime };
}
