// `npm test` runs this first (the `pretest` script): the Debian programs the tests drive — chromium
// (test/mcp/browser-login.test.ts), wrk (test/bench/harness.test.ts), redis-server and haproxy (the
// cluster tests, test/cluster/) — are installed when missing,
// so the README's test command passes on a fresh machine. Without root it says in one line what to
// install and stops before any test runs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const NEEDED = [
  { pkg: 'chromium', present: () => existsSync('/usr/bin/chromium') },
  { pkg: 'wrk', present: () => spawnSync('wrk', ['-v']).error === undefined },
  { pkg: 'redis-server', present: () => existsSync('/usr/bin/redis-server') },
  { pkg: 'haproxy', present: () => existsSync('/usr/sbin/haproxy') },
  // promtool, which checks the /metrics exposition (test/observability/metrics.test.ts).
  { pkg: 'prometheus', present: () => existsSync('/usr/bin/promtool') },
];

const missing = NEEDED.filter((n) => !n.present()).map((n) => n.pkg);
if (missing.length > 0) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    process.stderr.write(`npm test needs Debian packages that are missing: run "sudo apt-get install -y ${missing.join(' ')}" first\n`);
    process.exit(1);
  }
  process.stderr.write(`npm test: installing ${missing.join(', ')} from Debian (apt-get)\n`);
  const apt = (args) => spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  const update = apt(['update', '-qq']);
  const install = update.status === 0 ? apt(['install', '-y', '-qq', ...missing]) : update;
  const still = NEEDED.filter((n) => !n.present()).map((n) => n.pkg);
  if (install.status !== 0 || still.length > 0) {
    process.stderr.write(`npm test: could not install ${still.join(' ') || missing.join(' ')} with apt-get (exit ${install.status})\n`);
    process.exit(1);
  }
}
