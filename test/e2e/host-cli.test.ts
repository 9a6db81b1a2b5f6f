import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_BASE_PATH } from '../../functions/config/resources.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from '../../local/lambda-runtime.js';
import { eventually } from '../support/waiting.js';

interface RunningCli {
  readonly child: ChildProcess;
  readonly banner: string;
  readonly url: string;
  output(): string;
  exited: Promise<number | null>;
}

/** `npm start` is `tsx local/main.ts`; run the same with a temporary working directory and PORT=0. */
async function startCli(cwd: string, args: string[] = []): Promise<RunningCli> {
  const child = spawn(
    join(REPOSITORY_ROOT, 'node_modules', '.bin', 'tsx'),
    [join(REPOSITORY_ROOT, 'local', 'main.ts'), ...args],
    {
      cwd,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const output = () => `\nstdout:\n${stdout}\nstderr:\n${stderr}`;
  try {
    await eventually(
      () => `the CLI's banner${output()}`,
      () => {
        if (child.exitCode !== null) throw new Error(`the CLI exited (${child.exitCode}) before its banner${output()}`);
        return stdout.includes('Ctrl-C stops.');
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const url = /API\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1] ?? '';
  return { child, banner: stdout, url, output: () => stdout, exited };
}

async function jwksKid(url: string): Promise<string> {
  const jwks = (await (await fetch(`${url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
  return jwks.keys[0]?.kid ?? '';
}

describe('npm start (tsx local/main.ts)', () => {
  let cwd: string;
  const running: ChildProcess[] = [];

  beforeAll(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'koerier-cli-'));
  });
  afterAll(async () => {
    for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
    await rm(cwd, { recursive: true, force: true });
  });

  let firstKid = '';
  let publisherSecret = '';

  it('is what npm start runs', async () => {
    const manifest = JSON.parse(await readFile(join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts['start']).toBe('tsx local/main.ts');
  });

  it('review #21, issue 16: prints the URLs, the development clients without their secrets and a token command that works, serves /health and the console, and exits 0 on SIGINT', async () => {
    const cli = await startCli(cwd);
    running.push(cli.child);
    expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const line of [
      `API       ${cli.url}${API_BASE_PATH}`,
      `OpenAPI   ${cli.url}${API_BASE_PATH}/openapi.json`,
      `JWKS      ${cli.url}/.well-known/jwks.json`,
      `Health    ${cli.url}/health`,
      `Signing   ${cli.url}/.well-known/http-message-signatures-directory  (keys of signed deliveries)`,
      `Console   ${cli.url}/console/  (sign in as a development client)`,
    ]) {
      expect(cli.banner).toContain(line);
    }
    expect(cli.banner).toContain(`${join(cwd, 'koerier.local.json')}, created now`);
    // Issue 28, item 14b: the console's sign-in code of this start, and the file only the user reads it from.
    const signInCode = /^ {12}sign-in code (\S+) {2}\(this start only; also in (.+)\)$/m.exec(cli.banner);
    expect(signInCode?.[2]).toBe(join(cwd, '.koerier', 'console-sign-in-code'));
    expect((await readFile(signInCode![2]!, 'utf8')).trim()).toBe(signInCode![1]);

    const config = JSON.parse(await readFile(join(cwd, 'koerier.local.json'), 'utf8')) as {
      clients: Record<string, { secret: string }>;
    };
    publisherSecret = config.clients['dev-publisher']?.secret ?? '';
    expect(cli.banner).toMatch(/dev-publisher\s+scopes events:publish/);
    expect(cli.banner).toMatch(/dev-subscriber\s+scopes /);
    // No secret of any client appears; the banner says where they are instead.
    for (const client of Object.values(config.clients)) expect(cli.banner).not.toContain(client.secret);
    const readSecret = /^ {2}(node -p .+)$/m.exec(cli.banner)?.[1] ?? '';
    expect(readSecret).toContain(join(cwd, 'koerier.local.json'));
    expect(execFileSync('sh', ['-c', readSecret], { cwd: tmpdir() }).toString().trim()).toBe(publisherSecret);

    // The printed curl line works as printed, in a shell, from any directory.
    const curl = /^ {2}(curl -s .+)$/m.exec(cli.banner)?.[1] ?? '';
    expect(curl).toContain('/oauth/token');
    const token = JSON.parse(execFileSync('sh', ['-c', curl], { cwd: tmpdir() }).toString()) as {
      access_token?: string;
    };
    expect(token.access_token).toMatch(/^ey/);

    const health = await fetch(`${cli.url}/health`);
    expect(health.status).toBe(200);
    // Issue 16: the console comes with npm start, from the same server, page and script.
    const page = await fetch(`${cli.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const script = /<script[^>]+src="([^"]+)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    const bundle = await fetch(new URL(script!, `${cli.url}/console/`));
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    firstKid = await jwksKid(cli.url);
    expect(await readdir(join(cwd, '.koerier'))).toEqual(
      expect.arrayContaining(['dynamodb', 's3', 'keys', 'dev-signing-key.json']),
    );

    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toContain('SIGINT: stopping Koerier');
  });

  it('review #21: .koerier/ and everything in it is private to the user (directories 0700, files 0600)', async () => {
    const loose: string[] = [];
    const walk = async (path: string): Promise<void> => {
      const mode = (await stat(path)).mode;
      const isDirectory = (mode & 0o170000) === 0o040000;
      if ((mode & 0o777) !== (isDirectory ? 0o700 : 0o600)) loose.push(`${path} ${(mode & 0o777).toString(8)}`);
      if (isDirectory) for (const entry of await readdir(path)) await walk(join(path, entry));
    };
    await walk(join(cwd, '.koerier'));
    expect(loose).toEqual([]);
    expect((await stat(join(cwd, 'koerier.local.json'))).mode & 0o077).toBe(0);
  });

  it('review #22: a second npm start on the same state exits 1 and says a Koerier already runs there, with its pid; the first keeps running', async () => {
    const first = await startCli(cwd);
    running.push(first.child);
    const second = spawn(
      join(REPOSITORY_ROOT, 'node_modules', '.bin', 'tsx'),
      [join(REPOSITORY_ROOT, 'local', 'main.ts')],
      {
        cwd,
        env: { ...process.env, PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    running.push(second);
    let stderr = '';
    second.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => second.on('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(1);
    // The pid named is the first host's (the node process under tsx), the one in the lock file.
    const named = new RegExp(
      `^Koerier is already running with state ${join(cwd, '.koerier').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(pid (\\d+)\\)$`,
      'm',
    ).exec(stderr);
    expect(named, stderr).not.toBeNull();
    expect(Number(named![1])).toBe(Number((await readFile(join(cwd, '.koerier', 'koerier.pid'), 'utf8')).trim()));
    expect(stderr).not.toContain('Database is closed');
    expect((await fetch(`${first.url}/health`)).status).toBe(200);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // Stopped cleanly, the state is free again.
    expect(await readdir(join(cwd, '.koerier'))).not.toContain('koerier.pid');
  });

  it('--fresh wipes .koerier/ (new signing key, no old files) and keeps koerier.local.json', async () => {
    await writeFile(join(cwd, '.koerier', 'left-over'), 'from the previous run');
    const cli = await startCli(cwd, ['--fresh']);
    running.push(cli.child);
    expect(cli.banner).toContain('(fresh state)');
    expect(cli.banner).not.toContain('created now');
    const config = JSON.parse(await readFile(join(cwd, 'koerier.local.json'), 'utf8')) as {
      clients: Record<string, { secret: string }>;
    };
    expect(config.clients['dev-publisher']?.secret).toBe(publisherSecret);
    expect(await readdir(join(cwd, '.koerier'))).not.toContain('left-over');
    expect(await jwksKid(cli.url)).not.toBe(firstKid);

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });
});
