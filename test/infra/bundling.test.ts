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
import type { ContractParser } from '../../functions/core/contracts/ports.js';
import { enrolmentContract, enrolmentPayload } from '../support/contract-documents.js';

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

  it('is bundled the same way by CDK (the aliases are among its esbuild arguments)', () => {
    expect(lambdaBundling.esbuildArgs?.['--alias']).toEqual([
      `@aws-sdk/credential-provider-node=${join(REPO_ROOT, 'functions', 'aws', 'lambda-credentials.ts')}`,
      `@asyncapi/specs=${join(REPO_ROOT, 'functions', 'app', 'asyncapi-3-schemas.ts')}`,
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

  it('issue 15: no function holds a client of the AWS SDK: they send with the lean clients (DynamoDB, SQS, S3, KMS)', async () => {
    const held: Record<string, string[]> = {};
    for (const name of Object.keys(functions) as FunctionName[]) held[name] = (await bundledPackages(name, dir)).filter((found) => found !== 'ajv');
    expect(held).toEqual(Object.fromEntries(Object.keys(functions).map((name) => [name, []])));
  }, 120_000);

  it('issue 15: of the functions that validate events, only the ingest, which checks data contracts, holds Ajv', async () => {
    expect(await bundledPackages('ingest', dir)).toEqual(['ajv']);
    expect(await bundledPackages('router', dir)).toEqual([]);
  }, 60_000);
});

describe('issue 15, item 4: what a cold start loads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'koerier-cold-start-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** How Koerier's own files and the other packages import `packages`: `file: kind` for each import. */
  async function importsInto(name: FunctionName, packages: RegExp): Promise<string[]> {
    const { metafile } = await build({
      ...esbuildOptions(join(REPO_ROOT, functions[name].entry), join(dir, name, 'index.mjs')),
      metafile: true,
      logLevel: 'error',
    });
    return Object.entries(metafile.inputs)
      .filter(([file]) => !packages.test(file))
      .flatMap(([file, { imports }]) => imports.filter(({ path }) => packages.test(path)).map(({ kind }) => `${file}: ${kind}`));
  }

  it('issue 15: the ingest reaches Ajv only through a dynamic import, so a cold start does not load it before a bound type needs it', async () => {
    const edges = await importsInto('ingest', /node_modules\/ajv(-formats)?\//);
    expect(edges.length).toBeGreaterThan(0);
    expect(edges.filter((edge) => !edge.endsWith(': dynamic-import'))).toEqual([]);
  }, 60_000);

  it('issue 15: the contract register reaches its document parsers only through a dynamic import, so reading the register does not load them', async () => {
    const edges = await importsInto('contracts', /functions\/app\/contract-parsers\.ts$/);
    expect(edges).toEqual(['functions/app/contracts-app.ts: dynamic-import']);
  }, 60_000);
});

describe('issue 15, item 4: the contract register carries the AsyncAPI 3.x schemas alone', () => {
  let dir: string;
  let parser: ContractParser;
  let bundled: string[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'koerier-parsers-'));
    const outfile = join(dir, 'index.mjs');
    const { metafile } = await build({ ...esbuildOptions(join(REPO_ROOT, 'functions/app/contract-parsers.ts'), outfile), metafile: true, logLevel: 'error' });
    const [, output] = Object.entries(metafile.outputs).find(([file]) => file.endsWith('index.mjs'))!;
    bundled = Object.entries(output.inputs)
      .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
      .map(([input]) => input);
    const { contractParser } = (await import(pathToFileURL(outfile).href)) as { contractParser: () => ContractParser };
    parser = contractParser();
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('issue 15: no schema of another AsyncAPI version is in the bundle', () => {
    const schemas = bundled.filter((input) => input.includes('@asyncapi/specs/')).map((input) => input.split('@asyncapi/specs/')[1]);
    expect(schemas.sort()).toEqual(['schemas/3.0.0.json', 'schemas/3.1.0.json']);
  });

  it('EDU-21: the bundled parser takes AsyncAPI 3.0 and 3.1 documents and refuses 2.6 with the version it wants', async () => {
    for (const asyncapi of ['3.0.0', '3.1.0']) {
      const parsed = await parser.parse('asyncapi-data', JSON.stringify({ ...enrolmentContract(enrolmentPayload()), asyncapi }), 'json');
      expect(parsed, asyncapi).toMatchObject({ valid: true, specVersion: asyncapi, messages: [{ id: 'enrolled' }] });
    }
    const old = await parser.parse('asyncapi-data', JSON.stringify({ asyncapi: '2.6.0', info: { title: 'x', version: '1' }, channels: {} }), 'json');
    expect(old).toEqual({ valid: false, errors: [expect.objectContaining({ message: expect.stringContaining('AsyncAPI 3.x'), path: '/asyncapi' })] });
  });

  it('EDU-21: the bundled parser still finds errors in a 3.0 document', async () => {
    const broken = { ...enrolmentContract(enrolmentPayload()), info: { title: 'no version' } };
    const parsed = await parser.parse('asyncapi-data', JSON.stringify(broken), 'json');
    expect(parsed.valid).toBe(false);
  });
});
