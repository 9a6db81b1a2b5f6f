import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functions, keys } from '../../functions/config/resources.js';
import { importHandler, invokeWithTimeout, lambdaContext, loadFunctions } from '../../local/lambda-runtime.js';
import { ensureLocalKeyFiles } from '../../local/local-keys.js';
import { settingEnv } from '../../functions/config.js';
import { eventually } from '../support/waiting.js';

describe('laptop Lambda runtime', () => {
  it('loads the handler module of every function in functions/config/resources.ts', async () => {
    const loaded = await loadFunctions();
    expect(loaded.map((fn) => fn.name).sort()).toEqual(Object.keys(functions).sort());
    for (const fn of loaded) expect(typeof fn.handler).toBe('function');
  });

  it('fails clearly, naming the function and the file, when a handler module is missing', async () => {
    await expect(importHandler('router', 'functions/handlers/not-written-yet.ts')).rejects.toThrow(
      'The laptop host cannot start function "router": its handler module functions/handlers/not-written-yet.ts does not exist',
    );
  });

  it('fails clearly when a module has no handler export', async () => {
    await expect(importHandler('config', 'functions/config.ts')).rejects.toThrow(
      'functions/config.ts has no exported function "handler"',
    );
  });

  it('gives a Lambda context whose remaining time counts down from the function timeout', async () => {
    const context = lambdaContext('apiDescription', { memoryMb: 256, timeoutSeconds: 5 });
    expect(context).toMatchObject({
      functionName: 'koerier-api-description',
      memoryLimitInMB: '256',
      functionVersion: '$LATEST',
    });
    expect(context.invokedFunctionArn).toMatch(/^arn:aws:lambda:[a-z0-9-]+:\d{12}:function:koerier-api-description$/);
    const first = context.getRemainingTimeInMillis();
    expect(first).toBeLessThanOrEqual(5000);
    await eventually('the remaining time to go down', () => context.getRemainingTimeInMillis() < first, {
      intervalMs: 5,
    });
  });

  it('ends an invocation that outlives the timeout with a timeout error', async () => {
    const fn = {
      name: 'slow',
      spec: { entry: '', memoryMb: 128, timeoutSeconds: 0.05 },
      handler: () => new Promise<never>(() => undefined),
    };
    await expect(invokeWithTimeout(fn, {})).rejects.toMatchObject({ name: 'FunctionTimeoutError' });
  });
});

describe('laptop key files (no KMS emulator)', () => {
  it('creates one 256-bit key file per key of functions/config/resources.ts, private to the user, and keeps it across restarts', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'koerier-keys-'));
    try {
      const environment = await ensureLocalKeyFiles(stateDir);
      expect(environment).toEqual({ [settingEnv.localKeysDir]: join(stateDir, 'keys') });
      for (const name of Object.keys(keys)) {
        const path = join(stateDir, 'keys', `${name}.key`);
        const material = await readFile(path, 'utf8');
        expect(Buffer.from(material, 'base64')).toHaveLength(32);
        expect((await stat(path)).mode & 0o777).toBe(0o600);
        await ensureLocalKeyFiles(stateDir);
        expect(await readFile(path, 'utf8')).toBe(material);
      }
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
