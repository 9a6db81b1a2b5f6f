/**
 * The real `koerier` binary (package.json `bin`, cli/koerier.mjs) run as a child process, as a user
 * runs it: arguments, environment and stdin in, exit code, stdout and stderr out. Each test gets its
 * own config folder (`XDG_CONFIG_HOME`) so logins and cached tokens never leak between tests or into
 * the user's own.
 *
 *   const cli = await cliUser(koerier.url);
 *   const { code, stdout } = await cli.run(['send', 'event.json'], { env: { KOERIER_CLIENT_ID: 'dev-publisher', KOERIER_CLIENT_SECRET: secret } });
 *   const listen = cli.spawn(['listen', '--port', '0']);   // long-running: read listen.stdout(), then listen.stop()
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPOSITORY_ROOT } from '../../local/lambda-runtime.js';
import { eventually } from './waiting.js';

export const KOERIER_BIN = join(REPOSITORY_ROOT, 'cli', 'koerier.mjs');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunningCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<CliResult>;
  /** SIGINT (as Ctrl-C), then the result. */
  stop(): Promise<CliResult>;
}

export interface CliUser {
  /** The user's config folder, `$XDG_CONFIG_HOME/koerier`. */
  readonly configDir: string;
  readonly cwd: string;
  run(
    args: readonly string[],
    options?: { env?: Record<string, string | undefined>; stdin?: string; cwd?: string },
  ): Promise<CliResult>;
  spawn(args: readonly string[], options?: { env?: Record<string, string | undefined>; cwd?: string }): RunningCli;
  remove(): Promise<void>;
}

/** A user with an empty config folder and a working directory, talking to the gateway at `url`. */
export async function cliUser(url: string): Promise<CliUser> {
  const home = await mkdtemp(join(tmpdir(), 'koerier-cli-user-'));
  const children: ChildProcess[] = [];
  const environment = (extra: Record<string, string | undefined> = {}) => {
    // Nothing of the test runner's own KOERIER_* settings (the host exports its functions' settings) reaches the CLI.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('KOERIER_')));
    const env: Record<string, string> = {
      ...(inherited as Record<string, string>),
      XDG_CONFIG_HOME: join(home, 'config'),
      KOERIER_URL: url,
      NO_COLOR: '1',
    };
    for (const [name, value] of Object.entries(extra)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    return env;
  };
  const start = (
    args: readonly string[],
    options: { env?: Record<string, string | undefined>; cwd?: string } = {},
  ): RunningCli => {
    // The file itself, through its shebang, as npm links it for `npx koerier`.
    const child = spawn(KOERIER_BIN, [...args], {
      cwd: options.cwd ?? home,
      env: environment(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    return {
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      exited,
      stop: () => {
        if (child.exitCode === null) child.kill('SIGINT');
        return exited;
      },
    };
  };
  return {
    configDir: join(home, 'config', 'koerier'),
    cwd: home,
    async run(args, options = {}) {
      const running = start(args, options);
      running.child.stdin?.end(options.stdin ?? '');
      return running.exited;
    },
    spawn(args, options = {}) {
      const running = start(args, options);
      return running;
    },
    async remove() {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** `koerier listen` on a free port (`--port 0`, with `args` such as `--json` or `--rate 6`), once it says where it listens. */
export async function startListen(cli: CliUser, args: readonly string[]): Promise<{ listen: RunningCli; url: string }> {
  const listen = cli.spawn(['listen', '--port', '0', ...args]);
  const url = await eventually('listen to start', () => /Listening on (http:\/\/\S+)/.exec(listen.stderr())?.[1]);
  return { listen, url };
}

/**
 * `koerier subscriptions create` of a push subscription to `sink` for `type`, as `subscriber` (its
 * KOERIER_CLIENT_ID and KOERIER_CLIENT_SECRET), with a sink token the laptop host at `origin` issues
 * to `dev-subscriber` from that same secret: how a subscriber points Koerier at its receiver.
 * `args` go before `--json`, which is given unless `json: false`.
 */
export function createPushSubscription(
  cli: CliUser,
  options: {
    sink: string;
    type: string;
    origin: string;
    subscriber: Record<string, string>;
    args?: readonly string[];
    json?: boolean;
  },
): Promise<CliResult> {
  const { sink, type, origin, subscriber, args = [], json = true } = options;
  return cli.run(
    [
      'subscriptions',
      'create',
      '--sink',
      sink,
      '--type',
      type,
      '--sink-token-url',
      `${origin}/oauth/token`,
      '--sink-client-id',
      'dev-subscriber',
      ...args,
      ...(json ? ['--json'] : []),
    ],
    { env: { ...subscriber, KOERIER_SINK_CLIENT_SECRET: subscriber['KOERIER_CLIENT_SECRET'] } },
  );
}
