import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from '../../local/lambda-runtime.js';

interface RunningCli {
  readonly child: ChildProcess;
  readonly banner: string;
  readonly url: string;
  output(): string;
  exited: Promise<number | null>;
}

/** `npm start` is `tsx local/main.ts`; run the same with a temporary working directory and PORT=0. */
async function startCli(cwd: string, args: string[] = []): Promise<RunningCli> {
  const child = spawn(join(REPOSITORY_ROOT, 'node_modules', '.bin', 'tsx'), [join(REPOSITORY_ROOT, 'local', 'main.ts'), ...args], {
    cwd,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!stdout.includes('Ctrl-C stops.')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the CLI did not print its banner.\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
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
    const manifest = JSON.parse(await readFile(join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts['start']).toBe('tsx local/main.ts');
  });

  it('prints the URLs, the development clients and a token command, serves /health, and exits 0 on SIGINT', async () => {
    const cli = await startCli(cwd);
    running.push(cli.child);
    expect(cli.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const line of [`OpenAPI   ${cli.url}/openapi.json`, `JWKS      ${cli.url}/.well-known/jwks.json`, `Health    ${cli.url}/health`]) {
      expect(cli.banner).toContain(line);
    }
    expect(cli.banner).toContain(`${join(cwd, 'koerier.local.json')}, created now`);

    const config = JSON.parse(await readFile(join(cwd, 'koerier.local.json'), 'utf8')) as { clients: Record<string, { secret: string }> };
    publisherSecret = config.clients['dev-publisher']?.secret ?? '';
    expect(cli.banner).toMatch(new RegExp(`dev-publisher\\s+secret ${publisherSecret}`));
    expect(cli.banner).toContain(`dev-subscriber  secret ${config.clients['dev-subscriber']?.secret}`);

    // The printed curl line works as printed.
    const curl = /curl -s (\S+) -d (\S+) -d (\S+) -d (\S+)/.exec(cli.banner);
    expect(curl).not.toBeNull();
    const [, tokenUrl, ...fields] = curl as unknown as string[];
    const token = await fetch(tokenUrl ?? '', { method: 'POST', body: new URLSearchParams(fields.map((field) => field.split('=') as [string, string])) });
    expect(token.status).toBe(200);

    const health = await fetch(`${cli.url}/health`);
    expect(health.status).toBe(200);
    firstKid = await jwksKid(cli.url);
    expect(await readdir(join(cwd, '.koerier'))).toEqual(expect.arrayContaining(['dynamodb', 's3', 'keys', 'dev-signing-key.json']));

    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toContain('SIGINT: stopping Koerier');
  });

  it('--fresh wipes .koerier/ (new signing key, no old files) and keeps koerier.local.json', async () => {
    await writeFile(join(cwd, '.koerier', 'left-over'), 'from the previous run');
    const cli = await startCli(cwd, ['--fresh']);
    running.push(cli.child);
    expect(cli.banner).toContain('(fresh state)');
    expect(cli.banner).not.toContain('created now');
    expect(cli.banner).toContain(`secret ${publisherSecret}`);
    expect(await readdir(join(cwd, '.koerier'))).not.toContain('left-over');
    expect(await jwksKid(cli.url)).not.toBe(firstKid);

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });
});
