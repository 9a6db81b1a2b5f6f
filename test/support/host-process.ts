/**
 * The laptop host in a process of its own, for tests that must stop or kill it as a user or a
 * disaster would (Ctrl-C, SIGINT to `npm start`, SIGKILL) and start another on what it left:
 * test/e2e/host-restart.test.ts and test/e2e/disaster-recovery-drill.test.ts. `startTestHost`
 * (host.ts) runs the host inside the test process, which no signal can take down on its own.
 *
 *   const host = await startHostProcess({ command: TSX, args: [WORKER], readyPattern: /^ready (\S+)$/m, cwd, env });
 *   const token = await hostProcessToken(host.match[1]!, config, 'dev-subscriber');
 *   host.child.kill('SIGKILL'); await host.exited;
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { LocalConfig } from '../../local/local-config-file.js';
import { eventually } from './waiting.js';

export interface HostProcessOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** Matched against the process's stdout: the host is up once its ready line is there. */
  readonly readyPattern: RegExp;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** How long the host may take to print its ready line (default 30 s). */
  readonly timeoutMs?: number;
}

export interface HostProcess {
  readonly child: ChildProcess;
  /** The ready line's match: its groups carry what the host printed (its URL, its emulators). */
  readonly match: RegExpExecArray;
  /** Resolves with the exit code once the process has exited (null after a signal). */
  readonly exited: Promise<number | null>;
  /** What it wrote so far, for a failure message. */
  output(): string;
}

/**
 * Spawns the host and waits for its ready line on stdout; fails at once, with its output, when it
 * exits before. `onSpawn` sees the child before the wait, so a test can register it for cleanup
 * even when the host never becomes ready.
 */
export async function startHostProcess(
  options: HostProcessOptions,
  onSpawn: (child: ChildProcess) => void = () => undefined,
): Promise<HostProcess> {
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  onSpawn(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output = () => `\nstdout:\n${stdout}\nstderr:\n${stderr}`;
  const match = await eventually(
    () => `the host to start${output()}`,
    () => {
      if (child.exitCode !== null) throw new Error(`the host exited (${child.exitCode}) before it started${output()}`);
      return options.readyPattern.exec(stdout) ?? undefined;
    },
    { timeoutMs: options.timeoutMs ?? 30_000, intervalMs: 50 },
  );
  return { child, match, exited, output };
}

/**
 * An access token from the host's development token endpoint (client_secret_post) for a client of
 * the `koerier.local.json` it was started with: what `TestHost.token` is for a host in this process.
 */
export async function hostProcessToken(url: string, config: LocalConfig, clientId: string): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: config.clients[clientId]!.secret,
  });
  const answer = await fetch(`${url}/oauth/token`, { method: 'POST', body: form });
  if (!answer.ok) throw new Error(`token for ${clientId}: ${answer.status} ${await answer.text()}`);
  return ((await answer.json()) as { access_token: string }).access_token;
}
