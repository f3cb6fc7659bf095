/**
 * @module What the compiler says when the machine, not the data, stops a build: a full disk, a quota, a
 * read-only or unwritable builds directory. Node reports these as bare system errors ("ENOSPC: no space
 * left on device, write", no path: the write went to a file descriptor), which the CLI printed as an
 * unexpected error. The build knows where it was: the stage and the directory it was writing.
 */
import { DIAGNOSTIC_CODES, FatalBuildError } from './read/diagnostics.ts';

/** System error codes that mean "the place being written cannot take it", in words. */
const CAUSES: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'an input/output error of the device',
  EMFILE: 'too many open files in this process',
  ENFILE: 'too many open files on this system',
};

/**
 * A FatalBuildError naming the stage, the cause and the path for a system error of writing, or null
 * for anything else (which keeps its own report).
 */
export function writeFailure(err: unknown, stage: string | null, dir: string): FatalBuildError | null {
  const e = err as NodeJS.ErrnoException | null;
  const code = typeof e?.code === 'string' ? e.code : /No space left on device/i.test(String(e?.message)) ? 'ENOSPC' : undefined;
  const cause = code === undefined ? undefined : CAUSES[code];
  if (cause === undefined) return null;
  const where = typeof e?.path === 'string' ? e.path : dir;
  return new FatalBuildError(
    DIAGNOSTIC_CODES.writeFailed,
    `the build stopped${stage === null ? '' : ` in stage "${stage}"`}: ${cause} (${code}) writing ${where}; nothing was published and the current build is unchanged`,
  );
}
