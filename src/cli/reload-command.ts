/**
 * @module `hpd reload`: asks the running `hpd serve` of this state directory to adopt newly published
 * builds now (it also notices them by itself within about a second). The server is found through its
 * pid file and sent SIGHUP.
 */
import { pidFilePath, readPidFile } from './pid-file.ts';
import { stateDir } from './paths.ts';
import { parseCommandArgs } from './args.ts';
import { CliError } from './usage-error.ts';

export const RELOAD_USAGE = `Usage: hpd reload

Signals the running hpd serve (found through HPD_STATE_DIR/hpd-serve.pid) to adopt the builds published
since it started: a new current build of a year, or a new year. Requests in flight finish on the old
build; a build that fails verification is not adopted (the server's log says why).`;

export function reloadCommand(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): number {
  parseCommandArgs('reload', argv, {});
  const dir = stateDir(env);
  const pid = readPidFile(dir);
  if (pid === null) throw new CliError(`no running hpd serve found: ${pidFilePath(dir)} is missing (is HPD_STATE_DIR the server's?)`);
  try {
    process.kill(pid, 'SIGHUP');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'ESRCH'
        ? `no running hpd serve: pid ${pid} from ${pidFilePath(dir)} is not running`
        : `cannot signal pid ${pid}: ${code ?? String(err)}`,
    );
  }
  process.stdout.write(`hpd: asked hpd serve (pid ${pid}) to reload its builds\n`);
  return 0;
}
