/**
 * What the bundler does to the SDK's credentials (lib/bundling.ts, functions/aws/lambda-credentials.ts):
 * a deployed function takes its role's credentials from the environment, and its bundle carries
 * none of the default chain's other providers. Built for real with esbuild, then imported.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptions, lambdaBundling } from '../../lib/bundling.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const ENTRY = `
import { SQSClient } from '@aws-sdk/client-sqs';
export async function credentials() {
  const client = new SQSClient({ region: 'eu-west-1' });
  try { return await client.config.credentials(); } finally { client.destroy(); }
}
`;

describe('the credential chain of a bundled function', () => {
  let dir: string;
  let inputs: string[];
  let bundle: { credentials(): Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }> };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'koerier-bundle-'));
    const outfile = join(dir, 'index.mjs');
    const { entryPoints: _entry, ...options } = esbuildOptions(join(REPO_ROOT, 'unused.ts'), outfile);
    const result = await build({ ...options, stdin: { contents: ENTRY, resolveDir: REPO_ROOT, loader: 'ts' }, metafile: true, logLevel: 'error' });
    inputs = Object.keys(result.metafile.inputs);
    bundle = (await import(pathToFileURL(outfile).href)) as typeof bundle;
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes the credentials Lambda puts in the environment', async () => {
    const saved = { id: process.env['AWS_ACCESS_KEY_ID'], secret: process.env['AWS_SECRET_ACCESS_KEY'], token: process.env['AWS_SESSION_TOKEN'] };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'ASIAROLEOFTHEFUNCTION', AWS_SECRET_ACCESS_KEY: 'role-secret', AWS_SESSION_TOKEN: 'role-session' });
    try {
      expect(await bundle.credentials()).toMatchObject({ accessKeyId: 'ASIAROLEOFTHEFUNCTION', secretAccessKey: 'role-secret', sessionToken: 'role-session' });
    } finally {
      for (const [name, value] of [
        ['AWS_ACCESS_KEY_ID', saved.id],
        ['AWS_SECRET_ACCESS_KEY', saved.secret],
        ['AWS_SESSION_TOKEN', saved.token],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('carries no provider of the default chain but the environment one (SSO, ini files, processes, web identity, instance metadata)', () => {
    const providers = new Set(inputs.map((input) => /node_modules\/(@[^/]+\/credential-provider-[^/]+)/.exec(input)?.[1]).filter(Boolean));
    expect([...providers]).toEqual(['@aws-sdk/credential-provider-env']);
    expect(inputs.some((input) => input.endsWith('functions/aws/lambda-credentials.ts'))).toBe(true);
  });

  it('is bundled the same way by CDK (the alias is among its esbuild arguments)', () => {
    expect(lambdaBundling.esbuildArgs?.['--alias']).toEqual([
      `@aws-sdk/credential-provider-node=${join(REPO_ROOT, 'functions', 'aws', 'lambda-credentials.ts')}`,
    ]);
  });
});
