// `npm test` runs this first (the `pretest` script): the Debian programs the tests drive (NEEDED below,
// each with the tests that need it) are installed when missing, and wrk2 (the open-loop runs of
// test/bench/harness.test.ts, which has no Debian package) is built into data/cache/tools,
// so the README's test command passes on a fresh machine. Without root it says in one line what to
// install and stops before any test runs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const NEEDED = [
  // chromium (test/mcp/browser-login.test.ts), wrk (test/bench/harness.test.ts), redis-server and haproxy
  // (the cluster tests, test/cluster/).
  { pkg: 'chromium', present: () => existsSync('/usr/bin/chromium') },
  { pkg: 'wrk', present: () => spawnSync('wrk', ['-v']).error === undefined },
  { pkg: 'redis-server', present: () => existsSync('/usr/bin/redis-server') },
  // Redis Sentinel, which test/cluster/sentinel-failover.test.ts runs in front of a primary and a replica.
  { pkg: 'redis-sentinel', present: () => existsSync('/usr/bin/redis-sentinel') },
  { pkg: 'haproxy', present: () => existsSync('/usr/sbin/haproxy') },
  // promtool, which checks the /metrics exposition (test/observability/metrics.test.ts).
  { pkg: 'prometheus', present: () => existsSync('/usr/bin/promtool') },
  // ip, which puts the partial-write tests' server behind a small-buffer link in a network namespace
  // (test/helpers/small-buffer-netns.ts); minimal Debian images leave iproute2 out.
  { pkg: 'iproute2', present: () => existsSync('/usr/sbin/ip') || existsSync('/bin/ip') },
  // strace, which counts a server's syscalls per request (test/bench/syscall-profile.test.ts, the
  // kernel table of test/bench/tail-harness.test.ts).
  { pkg: 'strace', present: () => spawnSync('strace', ['-V']).error === undefined },
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

// wrk2: built from the pinned tarball in ../shared/tools (bench/tools/build-wrk2.sh, which apt-installs
// its compilers when missing; 20–40 s once), so the harness test does not spend its time limit on it.
// The path is the one bench/lib/wrk2.ts uses.
const wrk2Dir = fileURLToPath(new URL('../data/cache/tools/', import.meta.url));
if (!process.env.HPD_BENCH_WRK2 && !existsSync(`${wrk2Dir}wrk2`)) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    const r = spawnSync('cc', ['--version']);
    if (r.error !== undefined) {
      process.stderr.write(
        'npm test needs wrk2, built from source: run "sudo apt-get install -y build-essential libssl-dev zlib1g-dev" first\n',
      );
      process.exit(1);
    }
  }
  process.stderr.write('npm test: building wrk2 (bench/tools/build-wrk2.sh)\n');
  const built = spawnSync('bash', [fileURLToPath(new URL('../bench/tools/build-wrk2.sh', import.meta.url)), wrk2Dir], { stdio: 'inherit' });
  if (built.status !== 0) {
    process.stderr.write(`npm test: building wrk2 failed (exit ${built.status})\n`);
    process.exit(1);
  }
}
