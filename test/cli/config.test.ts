/**
 * The HPD_* settings as an operator meets them: declared once in src/config/settings.ts, documented
 * identically in `hpd serve --help` and the configuration table (docs/configuration.md), validated before `hpd serve` starts (one line
 * naming the variable, exit 2), a mistyped HPD_DATA_DIR refused instead of built into, and `hpd config`
 * showing the effective values with secrets masked. The CLI runs as a real child process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveConfig } from '../../src/config/serve-config.ts';
import { CONFIG_DOC, environmentUsage, markdownTable, TABLE_END, TABLE_START } from '../../src/config/settings-docs.ts';
import { BENCH_VARIABLES, readSetting, REPO_ROOT, SETTING_KEYS, SETTINGS } from '../../src/config/settings.ts';
import { DEFAULT_DRAIN_MS, DEFAULT_LISTENER_LIMITS } from '../../src/http/node-listener.ts';
import { DEFAULT_REST_MAX_CONNECTIONS, DEFAULT_RESPONSE_CACHE_BYTES, DEFAULT_SEARCH_CACHE_BYTES } from '../../src/http/server.ts';
import { DEFAULT_REDIS_GRACE_MS } from '../../src/policy/redis-store.ts';
import { runHpd, type HpdRun } from '../helpers/run-hpd.ts';

const NAMES = SETTING_KEYS.map((k) => SETTINGS[k].name);

/** This process's environment without any HPD_* variable, plus `extra`: the defaults are what is tested. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HPD_')) env[k] = v;
  return { ...env, ...extra };
}

/** hpd's own lines: oidc-provider may print a runtime warning of its own when loaded. */
const ownLines = (r: HpdRun): string[] => r.stderr.split('\n').filter((l) => l.startsWith('hpd:'));
const show = (r: HpdRun): string => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

test('the configuration table, hpd serve --help and settings.ts agree', async () => {
  const page = readFileSync(join(REPO_ROOT, CONFIG_DOC), 'utf8');
  const block = page.slice(page.indexOf(TABLE_START), page.indexOf(TABLE_END) + TABLE_END.length);
  assert.ok(page.includes(TABLE_START) && page.includes(TABLE_END), `${CONFIG_DOC} has the table markers`);
  assert.equal(block, markdownTable(), `${CONFIG_DOC} is out of date: run npm run docs:config`);
  for (const name of NAMES) assert.equal(block.split(`| \`${name}\` |`).length, 2, `${name} has one row in the configuration table`);

  const help = await runHpd(['serve', '--help'], { env: cleanEnv(), cwd: REPO_ROOT });
  assert.equal(help.code, 0, show(help));
  assert.ok(help.stdout.includes(environmentUsage()), 'hpd serve --help prints the generated environment part');
  for (const key of SETTING_KEYS) {
    const s = SETTINGS[key];
    assert.match(help.stdout, new RegExp(`^  ${s.name} `, 'm'), `${s.name} in hpd serve --help`);
    assert.ok(help.stdout.replace(/\s+/g, ' ').includes(`(default: ${s.defaultText})`), `${s.name}'s default in hpd serve --help`);
  }
});

test('every HPD_ name in src/ is declared in settings.ts (HPD_BUILD_* are diagnostic codes, not variables)', () => {
  const declared = new Set<string>([...NAMES, ...BENCH_VARIABLES.flatMap((b) => b.name.split(', '))]);
  const undeclared = new Set<string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts'))
        for (const m of readFileSync(path, 'utf8').matchAll(/\bHPD_[A-Z0-9_]*[A-Z0-9]\b/g))
          if (!m[0].startsWith('HPD_BUILD_') && !declared.has(m[0])) undeclared.add(`${m[0]} (${path.slice(REPO_ROOT.length)})`);
    }
  };
  walk(join(REPO_ROOT, 'src'));
  assert.deepEqual([...undeclared], []);
});

test('the declared defaults are the ones the server modules use', () => {
  const c = serveConfig(cleanEnv());
  assert.equal(c.restMaxConnections, DEFAULT_REST_MAX_CONNECTIONS);
  assert.equal(c.responseCacheBytes, DEFAULT_RESPONSE_CACHE_BYTES);
  assert.equal(c.searchCacheBytes, DEFAULT_SEARCH_CACHE_BYTES);
  assert.equal(c.maxConnections, DEFAULT_LISTENER_LIMITS.maxConnections);
  assert.equal(c.drainMs, DEFAULT_DRAIN_MS);
  assert.equal(c.redisGraceMs, DEFAULT_REDIS_GRACE_MS);
  assert.equal(c.baseUrl, 'http://127.0.0.1:8080');
  assert.equal(c.upgradeUrl, 'http://127.0.0.1:8080/pricing');
  assert.equal(c.metricsPort, undefined, 'no metrics listener unless HPD_METRICS_PORT is set');
  assert.equal(c.metricsHost, '127.0.0.1');
  assert.equal(c.accessLogRate, 0);
  assert.equal(c.dataDirIsDefault, true);
  const set = serveConfig(
    cleanEnv({
      HPD_HOST: '0.0.0.0',
      HPD_PORT: '9000',
      HPD_BASE_URL: 'https://api.example.com/',
      HPD_ACCESS_LOG: '0.25',
      HPD_DATA_DIR: '/tmp/elsewhere',
    }),
  );
  assert.equal(set.baseUrl, 'https://api.example.com', 'trailing slash dropped');
  assert.equal(set.upgradeUrl, 'https://api.example.com/pricing');
  assert.equal(set.mcpUrl, 'http://127.0.0.1:8081/mcp', 'a wildcard bind is linked through loopback');
  assert.equal(set.accessLogRate, 0.25);
  assert.equal(set.dataDirIsDefault, false);
  assert.equal(readSetting('accessLog', { HPD_ACCESS_LOG: 'full' }), 1);
  for (const [key, bad] of [
    ['port', '1e3'],
    ['port', ' 80'],
    ['port', '65536'],
    ['accessLog', '0'],
    ['accessLog', '1.5'],
    ['watchBuilds', 'yes'],
    ['mcpAllowedOrigins', 'https://a.example/path'],
    ['host', 'http://x'],
  ] as const) {
    const pattern = new RegExp(`^${SETTINGS[key].name} must be .*, got "${bad.replace('.', '\\.')}"$`);
    assert.throws(
      () => readSetting(key, { [SETTINGS[key].name]: bad }),
      (err: Error) => err.name === 'ConfigError' && pattern.test(err.message),
      `${key}=${bad}`,
    );
  }
});

test('the OAuth URLs are refused as settings, not by the servers: an issuer with a path or port 0, an MCP URL with a fragment', () => {
  const refused = (extra: NodeJS.ProcessEnv, pattern: RegExp): void =>
    assert.throws(
      () => serveConfig(cleanEnv(extra)),
      (err: Error) => err.name === 'ConfigError' && pattern.test(err.message),
      JSON.stringify(extra),
    );
  refused({ HPD_AUTH_URL: 'https://auth.example.com/oauth' }, /^HPD_AUTH_URL must be an http\(s\) origin without path/);
  refused({ HPD_AUTH_URL: 'http://auth.example.com:0' }, /^HPD_AUTH_URL must name the port clients reach/);
  refused({ HPD_MCP_URL: 'https://mcp.example.com/mcp#x' }, /^HPD_MCP_URL must be a URL without fragment/);
  // An external issuer replaces the embedded one: its port setting is then unused.
  assert.equal(
    serveConfig(cleanEnv({ HPD_AUTH_PORT: '0', HPD_AUTH_ISSUER: 'https://idp.example.com' })).externalIssuer,
    'https://idp.example.com',
  );
  assert.equal(serveConfig(cleanEnv({ HPD_AUTH_URL: 'https://auth.example.com/' })).authUrl, 'https://auth.example.com');
});

test('hpd serve refuses a bad value before starting: exit 2, one line naming the variable and what it expects', async () => {
  // A data directory that does not exist: the values are checked before the builds (that would be exit 1).
  const missing = join(tmpdir(), `hpd-no-such-dir-${process.pid}`);
  const cases: [string, string, RegExp][] = [
    ['HPD_QUOTA_PRO', '-5', /^hpd: HPD_QUOTA_PRO must be a positive integer \(requests per day\), got "-5"$/],
    [
      'HPD_BASE_URL',
      'not-a-url',
      /^hpd: HPD_BASE_URL must be an absolute http\(s\) URL such as https:\/\/api\.example\.com, got "not-a-url"$/,
    ],
    ['HPD_PORT', 'abc', /^hpd: HPD_PORT must be a port number from 0 to 65535, got "abc"$/],
    [
      'HPD_ACCESS_LOG',
      'sometimes',
      /^hpd: HPD_ACCESS_LOG must be off, full or a sampling rate greater than 0 and at most 1, such as 0\.01, got "sometimes"$/,
    ],
    [
      'HPD_REDIS_URL',
      'http://user:s3cret@db:6379',
      /^hpd: HPD_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL .*, got "http:\/\/user:\*\*\*\*@db:6379" \(the scheme must be redis:\/\/, rediss:\/\/ or redis\+sentinel:\/\/\)$/,
    ],
    [
      'HPD_REDIS_URL',
      'redis+sentinel://app:s3cret@10.0.0.1:26379,10.0.0.2:26379',
      /^hpd: HPD_REDIS_URL must be .*, got "redis\+sentinel:\/\/app:\*\*\*\*@10\.0\.0\.1:26379,10\.0\.0\.2:26379" \(no master name: the path must be \/<master-name> or \/<master-name>\/<db>\)$/,
    ],
  ];
  for (const [name, value, expected] of cases) {
    const r = await runHpd(['serve'], { env: cleanEnv({ [name]: value, HPD_DATA_DIR: missing }), cwd: REPO_ROOT });
    assert.equal(r.code, 2, `${name}=${value}: ${show(r)}`);
    assert.deepEqual(ownLines(r).length, 1, show(r));
    assert.match(ownLines(r)[0]!, expected);
    assert.equal(r.stdout, '');
    assert.ok(!r.stderr.includes('s3cret'), 'the password is masked');
  }
  assert.equal(existsSync(missing), false, 'nothing was created');
});

test('a mistyped HPD_DATA_DIR is not built into: exit 1, one line saying there is no build and what to do', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hpd-datadir-'));
  try {
    const typo = join(dir, 'bulids');
    const r = await runHpd(['serve'], {
      env: cleanEnv({ HPD_DATA_DIR: typo, HPD_STATE_DIR: join(dir, 'state'), HPD_PORT: '0', HPD_MCP_PORT: '0', HPD_AUTH_PORT: '0' }),
      cwd: REPO_ROOT,
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 1, show(r));
    assert.equal(ownLines(r).length, 1, show(r));
    assert.match(
      ownLines(r)[0]!,
      new RegExp(`^hpd: no build under ${typo} \\(HPD_DATA_DIR\\): .*hpd build --year 2025.*--build-if-missing`),
    );
    assert.doesNotMatch(r.stderr, /building the embedded default dataset/);
    assert.equal(existsSync(typo), false, 'no build was started there');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('hpd config prints each effective value and its source, the Redis password masked; --json for machines', async () => {
  const env = cleanEnv({ HPD_PORT: '9000', HPD_REDIS_URL: 'redis://app:s3cret@db.internal:6379/2', HPD_QUOTA_FREE: '' });
  const text = await runHpd(['config'], { env, cwd: REPO_ROOT });
  assert.equal(text.code, 0, show(text));
  assert.match(text.stdout, /^HPD_PORT +9000 +\(environment\)$/m);
  assert.match(text.stdout, /^HPD_BASE_URL +http:\/\/127\.0\.0\.1:9000 +\(default\)$/m, 'derived defaults follow the other settings');
  assert.match(text.stdout, /^HPD_QUOTA_FREE +100 +\(default\)$/m, 'an empty value counts as unset');
  assert.match(text.stdout, /^HPD_REDIS_URL +redis:\/\/app:\*\*\*\*@db\.internal:6379\/2 +\(environment\)$/m);
  assert.match(text.stdout, /^HPD_METRICS_PORT +\(unset\) +\(default\)$/m);
  assert.ok(!text.stdout.includes('s3cret'));
  assert.equal(text.stdout.trim().split('\n').length, NAMES.length, 'one line per variable');

  const json = await runHpd(['config', '--json'], { env, cwd: REPO_ROOT });
  assert.equal(json.code, 0, show(json));
  const rows = JSON.parse(json.stdout) as { name: string; value: string; source: string }[];
  assert.deepEqual(
    rows.map((r) => r.name),
    NAMES,
  );
  assert.deepEqual(
    rows.find((r) => r.name === 'HPD_PORT'),
    { name: 'HPD_PORT', value: '9000', source: 'environment' },
  );
  assert.deepEqual(
    rows.find((r) => r.name === 'HPD_UPGRADE_URL'),
    { name: 'HPD_UPGRADE_URL', value: 'http://127.0.0.1:9000/pricing', source: 'default' },
  );
  assert.ok(!json.stdout.includes('s3cret'));

  const bad = await runHpd(['config'], { env: cleanEnv({ HPD_PORT: 'abc' }), cwd: REPO_ROOT });
  assert.equal(bad.code, 2, show(bad));
  assert.match(bad.stderr, /^hpd: HPD_PORT must be a port number/m);
});
