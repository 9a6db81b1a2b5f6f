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
import { functions, type FunctionName } from '../../lib/resources.js';

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

const LEAN_S3_ENTRY = `
import { S3Requests } from './functions/aws/s3-requests.ts';
export async function authorization() {
  let sent;
  const s3 = new S3Requests({ region: 'eu-west-1', transport: async (request) => ((sent = request.headers), { statusCode: 200, headers: {}, body: Buffer.alloc(0) }) });
  await s3.getObject('koerier-payloads', 'payloads/a');
  return { authorization: sent.authorization, token: sent['x-amz-security-token'] };
}
`;

describe('issue 15, item 4: the lean S3 client in a bundle', () => {
  it('issue 15: signs with the credentials Lambda puts in the environment (the aliased chain, as the SDK clients)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-bundle-s3-'));
    const saved = { id: process.env['AWS_ACCESS_KEY_ID'], secret: process.env['AWS_SECRET_ACCESS_KEY'], token: process.env['AWS_SESSION_TOKEN'] };
    try {
      const outfile = join(dir, 'index.mjs');
      const { entryPoints: _entry, ...options } = esbuildOptions(join(REPO_ROOT, 'unused.ts'), outfile);
      const result = await build({ ...options, stdin: { contents: LEAN_S3_ENTRY, resolveDir: REPO_ROOT, loader: 'ts' }, metafile: true, logLevel: 'error' });
      const inputs = Object.keys(result.metafile.inputs);
      expect(inputs.filter((input) => /credential-provider-(?!env)/.test(input) || input.includes('client-s3'))).toEqual([]);
      const bundle = (await import(pathToFileURL(outfile).href)) as { authorization(): Promise<{ authorization: string; token: string }> };
      Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'ASIAROLEOFTHEFUNCTION', AWS_SECRET_ACCESS_KEY: 'role-secret', AWS_SESSION_TOKEN: 'role-session' });
      const signed = await bundle.authorization();
      expect(signed.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIAROLEOFTHEFUNCTION\/\d{8}\/eu-west-1\/s3\/aws4_request, /);
      expect(signed.token).toBe('role-session');
    } finally {
      for (const [name, value] of [
        ['AWS_ACCESS_KEY_ID', saved.id],
        ['AWS_SECRET_ACCESS_KEY', saved.secret],
        ['AWS_SESSION_TOKEN', saved.token],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** The packages (SDK clients, Ajv) a function's bundle holds, from esbuild's metafile. */
async function bundledPackages(name: FunctionName, dir: string): Promise<string[]> {
  const outfile = join(dir, name, 'index.mjs');
  const { metafile } = await build({ ...esbuildOptions(join(REPO_ROOT, functions[name].entry), outfile), metafile: true, logLevel: 'error' });
  // metafile.inputs names every file esbuild read, tree-shaken or not; the output's inputs are what the bundle holds.
  const [, output] = Object.entries(metafile.outputs).find(([file]) => file.endsWith('index.mjs'))!;
  const held = Object.entries(output.inputs).filter(([, { bytesInOutput }]) => bytesInOutput > 0);
  const packages = held.map(([input]) => /node_modules\/(@aws-sdk\/client-[^/]+|ajv)\//.exec(input)?.[1]);
  return [...new Set(packages.filter((found): found is string => found !== undefined))].sort();
}

describe('issue 15, item 4: what each function bundles', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'koerier-functions-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('issue 15: the API description (no adapter) holds no SDK client and no Ajv', async () => {
    expect(await bundledPackages('apiDescription', dir)).toEqual([]);
  }, 60_000);

  it('issue 15: the partners admin holds the DynamoDB client alone', async () => {
    expect(await bundledPackages('partners', dir)).toEqual(['@aws-sdk/client-dynamodb']);
  }, 60_000);

  it('issue 15: the router holds DynamoDB, and reaches SQS and S3 (the archive) with the lean clients, not the SDK ones; no KMS and no Ajv', async () => {
    expect(await bundledPackages('router', dir)).toEqual(['@aws-sdk/client-dynamodb']);
  }, 60_000);

  it('issue 15: only the ingest, which validates data contracts, holds Ajv; its queue writes and its claim check go to SQS and S3 without the SDK clients', async () => {
    expect(await bundledPackages('ingest', dir)).toEqual(['@aws-sdk/client-dynamodb', 'ajv']);
  }, 60_000);

  it('issue 15: the payloads function (presigned URLs, no other S3 call) holds no S3 client of the SDK', async () => {
    expect(await bundledPackages('payloads', dir)).toEqual(['@aws-sdk/client-dynamodb']);
  }, 60_000);
});
