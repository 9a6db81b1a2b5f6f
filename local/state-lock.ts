/**
 * One laptop host per state directory. A second `npm start` on the same `.koerier/` would otherwise
 * fail deep inside dynalite (LevelDB's own lock: `Database is closed`) or, worse, let two hosts
 * journal the same queues. The host writes its pid to `<stateDir>/koerier.pid` when it starts and
 * removes it when it stops; a file whose process is gone (after kill -9 or a crash) is taken over.
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'koerier.pid';

export class StateDirectoryInUseError extends Error {
  constructor(
    readonly stateDir: string,
    readonly pid: number,
  ) {
    super(`Koerier is already running with state ${stateDir} (pid ${pid})`);
    this.name = 'StateDirectoryInUseError';
  }
}

export interface StateLock {
  release(): void;
}

/** Takes the state directory (which must exist) for this process, or throws StateDirectoryInUseError. */
export function lockStateDirectory(stateDir: string): StateLock {
  const path = join(stateDir, LOCK_FILE);
  // Written in full first, then linked into place: link(2) fails if the name exists, so a
  // competing start never sees a lock file without its pid.
  const pending = join(stateDir, `${LOCK_FILE}.${process.pid}`);
  writeFileSync(pending, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(pending, path);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw lockError(error, stateDir, path);
        const holder = pidIn(path);
        if (holder !== undefined && holder !== process.pid && isAlive(holder))
          throw new StateDirectoryInUseError(stateDir, holder);
        // Left behind by a host that did not stop cleanly (or by this process): take it over.
        rmSync(path, { force: true });
      }
    }
  } finally {
    rmSync(pending, { force: true });
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      if (pidIn(path) === process.pid) rmSync(path, { force: true });
    },
  };
}

function lockError(error: unknown, stateDir: string, path: string): Error {
  const holder = pidIn(path);
  if (holder !== undefined && holder !== process.pid && isAlive(holder))
    return new StateDirectoryInUseError(stateDir, holder);
  return error instanceof Error ? error : new Error(String(error));
}

function pidIn(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Signal 0 checks that a process exists without touching it; EPERM means it exists as another user's. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
