/**
 * What the Lambda runtime gives a handler on the laptop: the `Context` object, a time limit, and
 * the handler modules themselves, loaded from the `entry` paths of functions/config/resources.ts.
 */
import { randomUUID } from 'node:crypto';
import { access } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import type { KoerierDependencies } from '../functions/app/dependencies.js';
import { functions, type FunctionName, type FunctionSpec } from '../functions/config/resources.js';
import { LOCAL_REGION } from './emulators.js';

const LOCAL_ACCOUNT_ID = '000000000000';
export const REPOSITORY_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Any Lambda handler in its promise form. */
export type LambdaHandler = (event: never, context: Context) => Promise<unknown>;

export interface LoadedFunction {
  readonly name: string;
  readonly spec: FunctionSpec;
  readonly handler: LambdaHandler;
}

/** The physical name the function would get from the CDK stack's naming, for logs and ARNs. */
export function localFunctionName(name: string): string {
  return `koerier-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

export function lambdaContext(functionName: string, spec: Pick<FunctionSpec, 'memoryMb' | 'timeoutSeconds'>): Context {
  const deadline = Date.now() + spec.timeoutSeconds * 1000;
  const physicalName = localFunctionName(functionName);
  const unsupported = () => {
    throw new Error('the callback-style context methods are not supported; return a promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: physicalName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:${physicalName}`,
    memoryLimitInMB: String(spec.memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${physicalName}`,
    logStreamName: `${new Date().toISOString().slice(0, 10).replace(/-/g, '/')}/[$LATEST]local`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

export class FunctionTimeoutError extends Error {
  override name = 'FunctionTimeoutError';
}

/**
 * Runs the handler as Lambda would, within its timeout. A handler cannot be killed in-process: past
 * the timeout its result is ignored (as Lambda would have ended the invocation) and the caller
 * treats the invocation as failed.
 */
export async function invokeWithTimeout(fn: LoadedFunction, event: unknown): Promise<unknown> {
  const context = lambdaContext(fn.name, fn.spec);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new FunctionTimeoutError(`Task timed out after ${fn.spec.timeoutSeconds}.00 seconds`)),
      fn.spec.timeoutSeconds * 1000,
    );
  });
  try {
    return await Promise.race([fn.handler(event as never, context), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Imports the handler module of each named function. With `dependencies`, each function is wired
 * to them through its module's `handlerFor` (the laptop host's own configuration and clients);
 * without, the module's `handler` runs on the AWS dependencies it builds from process.env, as in
 * Lambda. A missing module or a module without those exports stops the host with a message
 * naming the function and the file.
 */
export async function loadFunctions(
  names: readonly FunctionName[] = Object.keys(functions) as FunctionName[],
  dependencies?: KoerierDependencies,
): Promise<LoadedFunction[]> {
  const loaded: LoadedFunction[] = [];
  for (const name of names) {
    const spec: FunctionSpec = functions[name];
    const handler = dependencies
      ? await importHandlerFor(name, spec.entry, dependencies)
      : await importHandler(name, spec.entry);
    loaded.push({ name, spec, handler });
  }
  return loaded;
}

/** The function's `handlerFor(dependencies)`: the same wiring as its Lambda `handler`, on other dependencies. */
export async function importHandlerFor(
  name: string,
  entry: string,
  dependencies: KoerierDependencies,
): Promise<LambdaHandler> {
  const module = await importModule(name, entry);
  if (typeof module.handlerFor !== 'function') {
    throw new Error(
      `The laptop host cannot start function "${name}": ${entry} has no exported function "handlerFor" (see docs/ARCHITECTURE.md, "How to add a handler").`,
    );
  }
  return (module.handlerFor as (deps: () => KoerierDependencies) => LambdaHandler)(() => dependencies);
}

export async function importHandler(name: string, entry: string): Promise<LambdaHandler> {
  const module = await importModule(name, entry);
  if (typeof module.handler !== 'function') {
    throw new Error(`The laptop host cannot start function "${name}": ${entry} has no exported function "handler".`);
  }
  return module.handler as LambdaHandler;
}

async function importModule(name: string, entry: string): Promise<{ handler?: unknown; handlerFor?: unknown }> {
  const url = new URL(entry, pathToFileURL(REPOSITORY_ROOT));
  try {
    await access(url);
  } catch {
    throw new Error(
      `The laptop host cannot start function "${name}": its handler module ${entry} does not exist ` +
        `(functions/config/resources.ts names it as the entry).`,
    );
  }
  return (await import(url.href)) as { handler?: unknown; handlerFor?: unknown };
}
