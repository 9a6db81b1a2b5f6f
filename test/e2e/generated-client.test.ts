/**
 * Issue 14, item 6: the API description is good enough for a generator. The test fetches
 * /v1/openapi.json from the laptop host, generates TypeScript types from it with
 * openapi-typescript 7 (here, in the test: nothing generated is committed), type-checks a small
 * program written against those types with openapi-fetch (the project's compiler settings, strict),
 * and runs that program against the same host: publish, create a subscription, list its
 * deliveries, receive the event, and read a refusal as the typed Problem.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host.js';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
// Under the repository (so `openapi-fetch` resolves and the package is ESM), in the ignored tmp/.
const directory = join(REPOSITORY, 'tmp', `generated-client-${randomUUID()}`);

/** Written against the generated `paths` and `components`; every call and member is checked by the compiler. */
const PROGRAM = `
import { randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { components, paths } from './koerier-api.js';

type Problem = components['schemas']['Problem'];

export async function useKoerier(baseUrl: string, publisherToken: string, subscriberToken: string, type: string) {
  const publisher = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${publisherToken}\` } });
  const subscriber = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${subscriberToken}\` } });

  const subscription: components['schemas']['SubscriptionRequest'] = { delivery: 'pull', types: [type] };
  const created = await subscriber.POST('/subscriptions', { params: { header: { 'Idempotency-Key': randomUUID() } }, body: subscription });
  if (!created.data) throw new Error(\`subscription refused: \${JSON.stringify(created.error)}\`);
  const subscriptionId: string = created.data.id;

  const event: components['schemas']['CloudEvent'] = {
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:00000001234567890000:systeem:generated-client',
    type,
    data: { leerling: 'L-42' },
  };
  const published = await publisher.POST('/events', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: event,
    headers: { 'content-type': 'application/cloudevents+json' },
  });
  const accepted: number | undefined = published.data?.acceptedCount;

  const deliveries = await subscriber.GET('/subscriptions/{id}/deliveries', { params: { path: { id: subscriptionId }, query: { limit: 10 } } });
  const attempts: components['schemas']['DeliveryAttempt'][] | undefined = deliveries.data?.attempts;

  const received = await subscriber.POST('/subscriptions/{id}/events/receive', {
    params: { path: { id: subscriptionId } },
    body: { maxevents: 10, waitseconds: 10 },
  });
  const lockTokens: string[] = (received.data?.locks ?? []).map((lock) => lock.locktoken);

  // A publisher token (events:publish only) may not read subscriptions: a Problem, typed as such.
  const refused = await publisher.GET('/subscriptions/{id}', { params: { path: { id: subscriptionId } } });
  const problem: Problem | undefined = refused.error;

  // The types say no to what the API does not offer. Awaited: a request left running could fail
  // after the host stops, as an unhandled rejection that fails the whole run.
  // @ts-expect-error: there is no such path
  const unknownPath = await publisher.GET('/no-such-path');
  // @ts-expect-error: acceptedCount is a number, not a string
  const wrong: string | undefined = published.data?.acceptedCount;
  void wrong;

  return {
    subscriptionId,
    created: created.response.status,
    published: published.response.status,
    accepted,
    deliveries: deliveries.response.status,
    attempts,
    received: received.data?.events.length ?? 0,
    lockTokens,
    refused: refused.response.status,
    problem,
    unknownPath: unknownPath.response.status,
  };
}
`;

let koerier: TestHost;

beforeAll(async () => {
  koerier = await startTestHost();
  await mkdir(directory, { recursive: true });
});
afterAll(async () => {
  await koerier?.stop();
  await rm(directory, { recursive: true, force: true });
});

describe('a TypeScript client generated from /v1/openapi.json', () => {
  it(
    'issue 14 #6: openapi-typescript generates types from the served description, and a program using them with openapi-fetch type-checks',
    { timeout: 120_000 },
    async () => {
      const document = (await (await fetch(`${koerier.url}/openapi.json`)).json()) as Record<string, unknown>;
      // defaultNonNullable off: request bodies (a SubscriptionRequest) have members with defaults the
      // caller may leave out; openapi-typescript's default would make them required in requests too.
      const types = astToString(
        await openapiTS(document as unknown as Parameters<typeof openapiTS>[0], { defaultNonNullable: false }),
      );
      // Named component schemas, not inline bodies: the generated types carry their names.
      for (const name of [
        'CloudEvent',
        'Accepted',
        'Problem',
        'SubscriptionRequest',
        'Subscription',
        'DeliveryAttempt',
      ])
        expect(types).toContain(`${name}: {`);
      await writeFile(join(directory, 'koerier-api.ts'), types);
      await writeFile(join(directory, 'use-koerier.ts'), PROGRAM);

      const config = ts.getParsedCommandLineOfConfigFile(
        join(REPOSITORY, 'tsconfig.json'),
        {},
        { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
      );
      const program = ts.createProgram([join(directory, 'use-koerier.ts')], { ...config!.options, noEmit: true });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      expect(diagnostics).toEqual([]);
    },
  );

  it(
    'issue 14 #6: the generated client publishes, subscribes, lists deliveries and receives against the laptop host, and reads a refusal as a Problem',
    { timeout: 60_000 },
    async () => {
      const { useKoerier } = (await import(pathToFileURL(join(directory, 'use-koerier.ts')).href)) as {
        useKoerier: (
          baseUrl: string,
          publisherToken: string,
          subscriberToken: string,
          type: string,
        ) => Promise<Record<string, unknown>>;
      };
      const type = `nl.example.generated.${randomUUID().slice(0, 8)}.v1`;
      const result = await useKoerier(
        koerier.url,
        await koerier.token('dev-publisher', ['events:publish']),
        await koerier.token('dev-subscriber'),
        type,
      );
      expect(result).toMatchObject({
        created: 201,
        published: 202,
        accepted: 1,
        deliveries: 200,
        attempts: [],
        received: 1,
        refused: 403,
        unknownPath: 404,
      });
      expect(result['lockTokens']).toHaveLength(1);
      expect(result['problem']).toMatchObject({ status: 403, title: expect.any(String), detail: expect.any(String) });
    },
  );
});
