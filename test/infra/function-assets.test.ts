/**
 * Issue 15: what `cdk synth` puts in each function's asset when it really bundles (the other infra
 * tests skip bundling to take seconds): lib/bundling.ts's esbuild options, run by CDK's local
 * bundling, write `index.mjs` and the chunks split off beside it, each with its map.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functions } from '../../functions/config/resources.js';
import type { ContractParser } from '../../functions/core/contracts/ports.js';
import { enrolmentContract, enrolmentPayload } from '../support/contract-documents.js';
import { buildKoerier, synthContext, type CfnResourceJson } from './synth.js';

describe('issue 15: the function assets of a synthesis with real bundling', () => {
  let outdir: string;
  /** Each function's asset directory and handler, by the function's name in functions/config/resources.ts. */
  const assets = new Map<string, { directory: string; handler: string }>();

  beforeAll(async () => {
    outdir = await mkdtemp(join(tmpdir(), 'koerier-assets-'));
    // No `aws:cdk:bundling-stacks` in the context: CDK bundles every function, as `cdk synth` and `cdk deploy` do.
    const app = new App({ context: { ...synthContext }, outdir });
    const stack = buildKoerier(app);
    const assembly = app.synth();
    const template = assembly.getStackByName(stack.stackName).template as {
      Resources: Record<string, CfnResourceJson>;
    };
    for (const resource of Object.values(template.Resources)) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const name = /^Koerier (\w+) \(/.exec(String(resource.Properties['Description']))?.[1];
      const key = String(resource.Properties['Code']?.S3Key ?? '');
      if (name !== undefined && key.endsWith('.zip'))
        assets.set(name, {
          directory: join(outdir, `asset.${key.slice(0, -'.zip'.length)}`),
          handler: resource.Properties['Handler'],
        });
    }
  }, 180_000);

  afterAll(async () => {
    await rm(outdir, { recursive: true, force: true });
  });

  it('issue 15: every function has an asset of its own (not one function’s bundle for all), holding index.mjs and its map, handler index.handler', async () => {
    expect([...assets.keys()].sort()).toEqual(Object.keys(functions).sort());
    expect(new Set([...assets.values()].map(({ directory }) => directory)).size).toBe(assets.size);
    for (const [name, { directory, handler }] of assets) {
      expect(handler, name).toBe('index.handler');
      expect(await readdir(directory), name).toEqual(expect.arrayContaining(['index.mjs', 'index.mjs.map']));
    }
  });

  it('issue 15: the contracts asset holds the parsers in a chunk beside index.mjs, with its own map, loaded by import() and not at the cold start', async () => {
    const { directory } = assets.get('contracts')!;
    const files = await readdir(directory);
    const chunk = files.find((file) => /^contract-parsers-\w+\.mjs$/.test(file));
    expect(chunk).toBeDefined();
    expect(files).toContain(`${chunk}.map`);
    const index = await readFile(join(directory, 'index.mjs'), 'utf8');
    expect(index).toContain(`import("./${chunk}")`);
    expect(index).not.toMatch(new RegExp(`from\\s*"\\./${chunk!.replace('.', '\\.')}"`));
    // The maps name the sources each file holds: the parsers' packages are in the chunk, none in what the cold start reads.
    const sources = async (file: string) =>
      (JSON.parse(await readFile(join(directory, `${file}.map`), 'utf8')) as { sources: string[] }).sources;
    const parsers = (source: string) =>
      /node_modules\/(@asyncapi\/parser|@readme\/openapi-parser|@stoplight\/spectral-core)\//.test(source);
    expect((await sources(chunk!)).filter(parsers)).not.toEqual([]);
    const statically = [...index.matchAll(/from\s*"\.\/([\w-]+\.mjs)"/g)].map((match) => match[1]!);
    for (const file of ['index.mjs', ...statically]) expect((await sources(file)).filter(parsers), file).toEqual([]);
  });

  it('EDU-21, issue 15: the deployed parsers chunk, loaded as import() loads it, parses an AsyncAPI 3.0 document', async () => {
    const { directory } = assets.get('contracts')!;
    const chunk = (await readdir(directory)).find((file) => /^contract-parsers-\w+\.mjs$/.test(file))!;
    const { contractParser } = (await import(pathToFileURL(join(directory, chunk)).href)) as {
      contractParser: () => ContractParser;
    };
    const parsed = await contractParser().parse(
      'asyncapi-data',
      JSON.stringify(enrolmentContract(enrolmentPayload())),
      'json',
    );
    expect(parsed).toMatchObject({ valid: true, specVersion: '3.0.0', messages: [{ id: 'enrolled' }] });
  }, 30_000);
});
