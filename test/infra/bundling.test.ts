/**
 * What the bundler does to the SDK's credentials (lib/bundling.ts, functions/aws/lambda-credentials.ts):
 * a deployed function takes its role's credentials from the environment, and its bundle carries
 * none of the default chain's other providers. Built for real with esbuild, then imported.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_ALIASES, BUNDLE_FILE, esbuildOptions } from '../../lib/bundling.js';
import { functions, type FunctionName, type FunctionSpec } from '../../functions/config/resources.js';
import type { ContractParser } from '../../functions/core/contracts/ports.js';
import { enrolmentContract, enrolmentPayload } from '../support/contract-documents.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');

/** `contents` bundled with the deployed options as if it were a file at the repository's root; esbuild names the output after stdin. */
async function bundleText(contents: string, dir: string): Promise<{ outfile: string; inputs: string[] }> {
  const { entryPoints: _entry, ...options } = esbuildOptions(join(REPO_ROOT, 'unused.ts'), dir);
  const result = await build({ ...options, stdin: { contents, resolveDir: REPO_ROOT, loader: 'ts' }, metafile: true });
  return { outfile: join(dir, 'stdin.mjs'), inputs: Object.keys(result.metafile.inputs) };
}

/** The files whose code is in any output (index.mjs or a chunk): metafile.inputs also names those esbuild read and tree-shook away. */
function heldInputs(metafile: Metafile): string[] {
  const held = Object.values(metafile.outputs).flatMap((output) =>
    Object.entries(output.inputs).filter(([, { bytesInOutput }]) => bytesInOutput > 0),
  );
  return [...new Set(held.map(([input]) => input))];
}
const ENTRY = `
import { SQSClient } from '@aws-sdk/client-sqs';
export async function credentials() {
  const client = new SQSClient({ region: 'eu-west-1' });
  try { return await client.config.credentials(); } finally { client.destroy(); }
}
`;

/** A temporary directory for the enclosing describe's tests, made before them and removed after them. */
function temporaryDirectory(prefix: string): () => string {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  return () => dir!;
}

describe('the credential chain of a bundled function', () => {
  let dir: string;
  let inputs: string[];
  let bundle: { credentials(): Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }> };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'koerier-bundle-'));
    const { outfile, inputs: read } = await bundleText(ENTRY, dir);
    inputs = read;
    bundle = (await import(pathToFileURL(outfile).href)) as typeof bundle;
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes the credentials Lambda puts in the environment', async () => {
    const saved = {
      id: process.env['AWS_ACCESS_KEY_ID'],
      secret: process.env['AWS_SECRET_ACCESS_KEY'],
      token: process.env['AWS_SESSION_TOKEN'],
    };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'ASIAROLEOFTHEFUNCTION',
      AWS_SECRET_ACCESS_KEY: 'role-secret',
      AWS_SESSION_TOKEN: 'role-session',
    });
    try {
      expect(await bundle.credentials()).toMatchObject({
        accessKeyId: 'ASIAROLEOFTHEFUNCTION',
        secretAccessKey: 'role-secret',
        sessionToken: 'role-session',
      });
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
    const providers = new Set(
      inputs.map((input) => /node_modules\/(@[^/]+\/credential-provider-[^/]+)/.exec(input)?.[1]).filter(Boolean),
    );
    expect([...providers]).toEqual(['@aws-sdk/credential-provider-env']);
    expect(inputs.some((input) => input.endsWith('functions/aws/lambda-credentials.ts'))).toBe(true);
  });

  it('the aliases are absolute paths into the repository (a build CDK starts need not run in the repository)', () => {
    expect(BUNDLE_ALIASES).toEqual({
      '@aws-sdk/credential-provider-node': join(REPO_ROOT, 'functions', 'aws', 'lambda-credentials.ts'),
      '@asyncapi/specs': join(REPO_ROOT, 'functions', 'app', 'asyncapi-3-schemas.ts'),
      'node-fetch': join(REPO_ROOT, 'functions', 'app', 'refusing-node-fetch.ts'),
    });
  });
});

const S3_ENTRY = `
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client } from './functions/aws/clients.ts';
export async function authorization() {
  const s3 = createS3Client({ region: 'eu-west-1' });
  let sent;
  // Stopped once signed, before it is sent.
  s3.middlewareStack.add(() => async (args) => { sent = args.request.headers; throw new Error('stopped'); }, { step: 'deserialize', priority: 'high' });
  await s3.send(new GetObjectCommand({ Bucket: 'koerier-payloads', Key: 'payloads/a' })).catch(() => undefined);
  s3.destroy();
  return { authorization: sent.authorization, token: sent['x-amz-security-token'] };
}
`;

describe('issue 27: the SDK S3 client in a bundle', () => {
  it('issue 27: signs with the credentials Lambda puts in the environment (the aliased chain), as every SDK client of a function does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-bundle-s3-'));
    const saved = {
      id: process.env['AWS_ACCESS_KEY_ID'],
      secret: process.env['AWS_SECRET_ACCESS_KEY'],
      token: process.env['AWS_SESSION_TOKEN'],
    };
    try {
      const { outfile, inputs } = await bundleText(S3_ENTRY, dir);
      expect(inputs.filter((input) => /credential-provider-(?!env)/.test(input))).toEqual([]);
      const bundle = (await import(pathToFileURL(outfile).href)) as {
        authorization(): Promise<{ authorization: string; token: string }>;
      };
      Object.assign(process.env, {
        AWS_ACCESS_KEY_ID: 'ASIAROLEOFTHEFUNCTION',
        AWS_SECRET_ACCESS_KEY: 'role-secret',
        AWS_SESSION_TOKEN: 'role-session',
      });
      const signed = await bundle.authorization();
      expect(signed.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=ASIAROLEOFTHEFUNCTION\/\d{8}\/eu-west-1\/s3\/aws4_request, /,
      );
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

/**
 * Each function's asset, built once for this file with the deployed options: the tests below read
 * the same build's metafile (what it holds, how it imports), so no function is bundled twice.
 */
const functionsDir = temporaryDirectory('koerier-functions-');
const functionBuilds = new Map<FunctionName, Promise<Metafile>>();
function functionBuild(name: FunctionName): Promise<Metafile> {
  let built = functionBuilds.get(name);
  if (!built) {
    built = build({
      ...esbuildOptions(join(REPO_ROOT, functions[name].entry), join(functionsDir(), name)),
      metafile: true,
    }).then((result) => result.metafile);
    functionBuilds.set(name, built);
  }
  return built;
}

/** The packages (SDK clients, Ajv) a function's asset holds, in index.mjs or any chunk, from esbuild's metafile. */
async function bundledPackages(name: FunctionName): Promise<string[]> {
  const metafile = await functionBuild(name);
  const packages = heldInputs(metafile).map((input) => /node_modules\/(@aws-sdk\/client-[^/]+|ajv)\//.exec(input)?.[1]);
  return [...new Set(packages.filter((found): found is string => found !== undefined))].sort();
}

/**
 * The SDK clients a function needs, from its grants in functions/config/resources.ts: a table grant needs
 * DynamoDB, a queue of any kind SQS, a bucket S3, a KMS key or signing key KMS. A queue trigger
 * alone needs none: the event source mapping receives for it.
 */
function clientsItsGrantsNeed(name: FunctionName): string[] {
  const spec: FunctionSpec = functions[name];
  const needs = new Set<string>();
  if (Object.keys(spec.tables ?? {}).length > 0) needs.add('@aws-sdk/client-dynamodb');
  // A queue the function only consumes is read by its event source mapping, not by its code.
  if (
    Object.values(spec.queues ?? {}).some((access) => access !== 'consume') ||
    Object.keys(spec.deadLetterQueues ?? {}).length > 0 ||
    (spec.pullQueues ?? []).length > 0
  )
    needs.add('@aws-sdk/client-sqs');
  if (Object.keys(spec.buckets ?? {}).length > 0) needs.add('@aws-sdk/client-s3');
  if (
    Object.keys(spec.keys ?? {}).length > 0 ||
    (spec.trust ?? []).some((use) => use === 'sign' || use === 'public-keys')
  )
    needs.add('@aws-sdk/client-kms');
  // Out-of-band alert e-mail through SES (issue 30 item 3).
  if (spec.email) needs.add('@aws-sdk/client-sesv2');
  return [...needs].sort();
}

describe('issue 27: what each function bundles', () => {
  it('CARD-8, issue 27: each function holds the AWS SDK clients of exactly the services its grants name, and no others', async () => {
    const held: Record<string, string[]> = {};
    const needed: Record<string, string[]> = {};
    for (const name of Object.keys(functions) as FunctionName[]) {
      held[name] = (await bundledPackages(name)).filter((found) => found !== 'ajv');
      needed[name] = clientsItsGrantsNeed(name);
    }
    expect(held).toEqual(needed);
    // Not vacuous: the SDK is in the bundles.
    expect(held['delivery']).toEqual([
      '@aws-sdk/client-dynamodb',
      '@aws-sdk/client-kms',
      '@aws-sdk/client-s3',
      '@aws-sdk/client-sqs',
    ]);
  }, 120_000);

  it('issue 15: of the functions that validate events, only the ingest, which checks data contracts, holds Ajv', async () => {
    expect((await bundledPackages('ingest')).filter((found) => !found.startsWith('@aws-sdk/'))).toEqual(['ajv']);
    expect((await bundledPackages('router')).filter((found) => !found.startsWith('@aws-sdk/'))).toEqual([]);
  }, 60_000);
});

describe('issue 15, item 4: what a cold start loads', () => {
  /** How Koerier's own files and the other packages import `packages`: `file: kind` for each import. */
  async function importsInto(name: FunctionName, packages: RegExp): Promise<string[]> {
    const metafile = await functionBuild(name);
    return Object.entries(metafile.inputs)
      .filter(([file]) => !packages.test(file))
      .flatMap(([file, { imports }]) =>
        imports.filter(({ path }) => packages.test(path)).map(({ kind }) => `${file}: ${kind}`),
      );
  }

  it('issue 15: behind an import() only ES modules, but Ajv and its formats, whose default export data-contracts.ts takes (a CommonJS chunk exports nothing by name)', async () => {
    const commonJs: string[] = [];
    for (const name of Object.keys(functions) as FunctionName[]) {
      const metafile = await functionBuild(name);
      for (const [file, { imports }] of Object.entries(metafile.inputs)) {
        for (const { path, kind, external } of imports) {
          if (kind === 'dynamic-import' && !external && metafile.inputs[path]?.format === 'cjs')
            commonJs.push(`${name}: ${file} -> ${path.split('node_modules/').at(-1)}`);
        }
      }
    }
    expect(commonJs.sort()).toEqual([
      'ingest: functions/core/contracts/data-contracts.ts -> ajv-formats/dist/index.js',
      'ingest: functions/core/contracts/data-contracts.ts -> ajv/dist/ajv.js',
      // Issue 34: a notificatie takes the ingest's path, data contracts included.
      'zgw: functions/core/contracts/data-contracts.ts -> ajv-formats/dist/index.js',
      'zgw: functions/core/contracts/data-contracts.ts -> ajv/dist/ajv.js',
    ]);
  }, 120_000);

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

/** The ingest's data contracts, bound to one message whose schema needs a format (ajv-formats) and a member. */
const DATA_CONTRACTS_ENTRY = `
import { DataContracts } from './functions/core/contracts/data-contracts.ts';
import { silentLog } from './functions/core/ports/log.ts';
const binding = { type: 'nl.edu.enrolment.created.v1', contract: 'enrolments', version: '1.0.0', message: 'enrolled', mode: 'enforce', updatedAt: '', updatedBy: '' };
const schema = { type: 'object', required: ['student', 'contact'], properties: { student: { type: 'string' }, contact: { type: 'string', format: 'email' } } };
export function check(data: unknown) {
  const contracts = new DataContracts({
    store: { listBindings: async () => [binding] },
    documents: { getSchemas: async () => ({ enrolled: schema }) },
    refreshMs: 60_000,
    clock: () => 0,
    log: silentLog,
  });
  return contracts.check([{ type: binding.type, json: JSON.stringify({ type: binding.type, data }) }] as never, false);
}
`;

describe('issue 15: code splitting keeps what is loaded through import() working', () => {
  const dir = temporaryDirectory('koerier-split-');

  it('issue 14 item 3, issue 15: the bundled data contracts load Ajv and its formats from their own chunks (CommonJS behind import()) and check an event', async () => {
    const { outfile } = await bundleText(DATA_CONTRACTS_ENTRY, dir());
    expect((await readdir(dir())).filter((file) => /^ajv-\w+\.mjs$/.test(file))).toHaveLength(1);
    const { check } = (await import(pathToFileURL(outfile).href)) as {
      check: (data: unknown) => Promise<{ violations: { pointer: string; rule: string }[] }>;
    };
    expect((await check({ student: 'S-1', contact: 'ouder@example.org' })).violations).toEqual([]);
    const refused = await check({ contact: 'not an address' });
    expect(refused.violations.map(({ pointer, rule }) => `${pointer} ${rule}`).sort()).toEqual([
      '/data/contact format',
      '/data/student required',
    ]);
  }, 60_000);
});

describe('issue 15, item 4: the contract register carries the AsyncAPI 3.x schemas alone', () => {
  let dir: string;
  let parser: ContractParser;
  let bundled: string[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'koerier-parsers-'));
    const { metafile } = await build({
      ...esbuildOptions(join(REPO_ROOT, 'functions/app/contract-parsers.ts'), dir),
      metafile: true,
    });
    bundled = heldInputs(metafile);
    const { contractParser } = (await import(pathToFileURL(join(dir, BUNDLE_FILE)).href)) as {
      contractParser: () => ContractParser;
    };
    parser = contractParser();
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('issue 15: no schema of another AsyncAPI version is in the bundle', () => {
    const schemas = bundled
      .filter((input) => input.includes('@asyncapi/specs/'))
      .map((input) => input.split('@asyncapi/specs/')[1]);
    expect(schemas.sort()).toEqual(['schemas/3.0.0.json', 'schemas/3.1.0.json']);
  });

  it('EDU-21: the bundled parser takes AsyncAPI 3.0 and 3.1 documents and refuses 2.6 with the version it wants', async () => {
    for (const asyncapi of ['3.0.0', '3.1.0']) {
      const parsed = await parser.parse(
        'asyncapi-data',
        JSON.stringify({ ...enrolmentContract(enrolmentPayload()), asyncapi }),
        'json',
      );
      expect(parsed, asyncapi).toMatchObject({ valid: true, specVersion: asyncapi, messages: [{ id: 'enrolled' }] });
    }
    const old = await parser.parse(
      'asyncapi-data',
      JSON.stringify({ asyncapi: '2.6.0', info: { title: 'x', version: '1' }, channels: {} }),
      'json',
    );
    expect(old).toEqual({
      valid: false,
      errors: [expect.objectContaining({ message: expect.stringContaining('AsyncAPI 3.x'), path: '/asyncapi' })],
    });
  });

  it('EDU-21: the bundled parser still finds errors in a 3.0 document', async () => {
    const broken = { ...enrolmentContract(enrolmentPayload()), info: { title: 'no version' } };
    const parsed = await parser.parse('asyncapi-data', JSON.stringify(broken), 'json');
    expect(parsed.valid).toBe(false);
  });

  it('issue 15: node-fetch, with whatwg-url and tr46, is not in the bundle: the refusing fetch is', () => {
    expect(bundled.filter((input) => /node_modules\/(node-fetch|whatwg-url|tr46)\//.test(input))).toEqual([]);
    expect(bundled).toContain('functions/app/refusing-node-fetch.ts');
  });

  describe('an external $ref to a server that answers', () => {
    let server: Server;
    let requests: string[];
    let schemaUrl: string;
    beforeAll(async () => {
      requests = [];
      server = createServer((request, response) => {
        requests.push(request.url ?? '');
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ type: 'string' }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      schemaUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/schemas/student.json`;
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it('EDU-21, issue 15: an AsyncAPI document with an http $ref is refused by the bundled parser, saying why, and nothing is fetched', async () => {
      const parsed = await parser.parse(
        'asyncapi-data',
        JSON.stringify(enrolmentContract(enrolmentPayload({ student: { $ref: schemaUrl } }))),
        'json',
      );
      expect(parsed.valid).toBe(false);
      expect(JSON.stringify(parsed)).toContain('external references (http) are not followed');
      expect(requests).toEqual([]);
    });

    it('EDU-21, issue 15: an OpenAPI document with an http $ref is refused by the bundled parser, pointing at the reference, and nothing is fetched', async () => {
      const document = {
        openapi: '3.1.0',
        info: { title: 'hooks', version: '1.0.0' },
        paths: {},
        webhooks: {
          enrolled: {
            post: {
              requestBody: { content: { 'application/json': { schema: { $ref: schemaUrl } } } },
              responses: { '200': { description: 'ok' } },
            },
          },
        },
      };
      const parsed = await parser.parse('openapi-webhook', JSON.stringify(document), 'json');
      expect(parsed).toEqual({
        valid: false,
        errors: [
          {
            message: `external reference "${schemaUrl}" is not followed: put the schema in the document`,
            path: '/webhooks/enrolled/post/requestBody/content/application~1json/schema/$ref',
            severity: 'error',
          },
        ],
      });
      expect(requests).toEqual([]);
    });

    it('issue 15: node-fetch, imported in a bundle, refuses the URL with an error that names it, and nothing reaches the server', async () => {
      const fetchDir = join(dir, 'node-fetch');
      const { outfile } = await bundleText(
        "import fetch from 'node-fetch';\nexport const get = (url: string) => fetch(url);\n",
        fetchDir,
      );
      const { get } = (await import(pathToFileURL(outfile).href)) as { get: (url: string) => Promise<unknown> };
      await expect(get(schemaUrl)).rejects.toThrow(
        `${schemaUrl} was not fetched: Koerier's functions follow no external reference`,
      );
      expect(requests).toEqual([]);
    });
  });
});
