/**
 * @module `hpd redis`: the operator's commands on the epoch of the shared Redis dataset
 * (src/policy/redis-epoch.ts), the only way an epoch is ever created or changed.
 *
 * `init` starts a dataset: the first start of a new cluster, starting over after Redis lost its data,
 * or a Redis holding hpd data from before epochs (kept). It refuses when Redis has an epoch, so it can
 * never replace a dataset in use. `adopt` re-stamps the epoch Redis holds now, so that instances that
 * served another dataset accept it (a restore from an older backup, a Redis replaced by another one).
 * `status` shows what Redis holds and whether `hpd serve` with this state directory would accept it;
 * it exits 1 when it would not. None of them reads or writes the state directory's record: only
 * `hpd serve` does.
 */
import { join } from 'node:path';
import {
  adoptRedisEpoch,
  describeEpoch,
  initRedisEpoch,
  judgeEpoch,
  readEpochRecord,
  readRedisEpoch,
  REDIS_EPOCH_FILE,
} from '../policy/redis-epoch.ts';
import { connectRedis, REDIS_PREFIX, redactRedisUrl, type RedisLink } from '../policy/redis-link.ts';
import { parseCommandArgs, unknownSubcommand } from './args.ts';
import { stateDir } from './paths.ts';
import { redisConfig } from './redis-config.ts';
import { CliError, UsageError } from './usage-error.ts';

export const REDIS_USAGE = `Usage: hpd redis <command>

Commands:
  init     give a Redis without an hpd epoch a new one: the first start of a new cluster, starting over
           after Redis lost its data (every API key, user and OAuth grant is gone then), or a Redis
           holding hpd data from before epochs (kept). Refuses when Redis has an epoch
  adopt    re-stamp the epoch Redis holds now, so every instance accepts it: after restoring Redis from
           an older backup, or replacing it. Running instances follow within a second; stopped ones at start
  status   print Redis's epoch, its stamp, the keys and users it holds, and whether hpd serve with this
           state directory would accept it (exit 1 when it would not)

No hpd process and no other command ever creates or switches an epoch: an instance whose Redis lost its
data keeps serving the keys it knows and reports "lost" until Redis is restored or one of these runs.
Redis: $HPD_REDIS_URL (required). State directory: $HPD_STATE_DIR, default var/ in the repository.`;

export async function redisCommand(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${REDIS_USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'init' && sub !== 'adopt' && sub !== 'status') throw unknownSubcommand('redis', sub, ['init', 'adopt', 'status']);
  parseCommandArgs(`redis ${sub}`, rest, {});
  const url = redisConfig(process.env).url;
  if (url === undefined || url === '')
    throw new UsageError('hpd redis works on the shared Redis: set HPD_REDIS_URL (the embedded store has no epoch)', null);
  const link = await connectRedis(url, { log: () => {} });
  try {
    const where = `Redis at ${redactRedisUrl(url)}`;
    if (sub === 'init') return await init(link, where);
    if (sub === 'adopt') return await adopt(link, where);
    return await status(link, where);
  } finally {
    await link.close();
  }
}

async function holdings(link: RedisLink): Promise<string> {
  const [keys, users] = await Promise.all([link.client.hlen(`${REDIS_PREFIX}keys`), link.client.hlen(`${REDIS_PREFIX}users`)]);
  return `${keys} API keys, ${users} users`;
}

async function init(link: RedisLink, where: string): Promise<number> {
  const { created, epoch } = await initRedisEpoch(link.client);
  if (!created) {
    throw new CliError(
      `${where} already has ${describeEpoch(epoch)}: init never replaces a dataset; to make instances accept it, run hpd redis adopt`,
    );
  }
  process.stdout.write(`created ${describeEpoch(epoch)} on ${where}, holding ${await holdings(link)}\n`);
  return 0;
}

async function adopt(link: RedisLink, where: string): Promise<number> {
  const epoch = await adoptRedisEpoch(link.client);
  if (epoch === null) throw new CliError(`${where} has no hpd epoch: nothing to adopt; restore it from its backup, or run hpd redis init`);
  process.stdout.write(`re-stamped ${describeEpoch(epoch)} on ${where}, holding ${await holdings(link)}: every instance accepts it now\n`);
  return 0;
}

async function status(link: RedisLink, where: string): Promise<number> {
  const current = await readRedisEpoch(link.client);
  const file = join(stateDir(), REDIS_EPOCH_FILE);
  const recorded = readEpochRecord(file);
  const generation = (await link.client.get(`${REDIS_PREFIX}generation`)) ?? '0';
  process.stdout.write(`redis\t${where}\n`);
  process.stdout.write(`epoch\t${current === null ? 'none' : describeEpoch(current)}\n`);
  process.stdout.write(`holds\t${await holdings(link)}, generation ${generation}\n`);
  process.stdout.write(`record\t${file}: ${recorded === undefined ? 'none (a new host: hpd serve joins)' : describeEpoch(recorded)}\n`);
  const verdict = judgeEpoch(current, recorded);
  const verdicts = {
    none: 'refused: Redis has no epoch (restore it from its backup, or run hpd redis init)',
    join: 'accepted: hpd serve joins this epoch',
    same: 'accepted: the recorded epoch',
    adopt: 'accepted: stamped by an operator since the record (hpd serve adopts it)',
    other: 'refused: another dataset than the recorded one (restore the backup, or run hpd redis adopt)',
  } as const;
  process.stdout.write(`serve\t${verdicts[verdict.kind]}\n`);
  if (verdict.kind !== 'none' && verdict.kind !== 'other') return 0;
  process.stderr.write(`hpd: hpd serve with ${stateDir()} would be ${verdicts[verdict.kind]}\n`);
  return 1;
}
