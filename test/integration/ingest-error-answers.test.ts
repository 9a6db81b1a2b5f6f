/**
 * Review #11: every error answer of the ingest is bounded, and fits the idempotency store's item
 * (DynamoDB: 400 KB for key, state, headers and body together), so it is kept and replayed like
 * any other answer. Against the real DynamoDB idempotency store on dynalite, which enforces the
 * 400 KB item limit as DynamoDB does.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFitsOneIdempotencyItem } from '../support/idempotency-item.js';
import { MAX_PROBLEM_BYTES, problemResponse } from '../../functions/core/http/problems.js';
import { startHandlerHarness, type HandlerHarness } from '../support/handler-harness.js';
import { problemTypeUri } from '../support/problem-types.js';

let harness: HandlerHarness;
let handler: (event: never, context: never) => Promise<unknown>;

const BATCH = 'application/cloudevents-batch+json';

beforeAll(async () => {
  harness = await startHandlerHarness();
  ({ handler } = (await import('../../functions/handlers/ingest.js')) as { handler: typeof handler });
});

afterAll(async () => {
  await harness?.stop();
});

async function post(clientId: string, body: string, key: string, contentType = BATCH) {
  return harness.invoke(handler, {
    method: 'POST',
    path: '/events',
    routeKey: 'POST /events',
    headers: {
      authorization: `Bearer ${await harness.token(clientId, 'events:publish')}`,
      'idempotency-key': key,
      'content-type': contentType,
    },
    body,
  });
}

/** Sends `body` twice with one key: the second answer must be the stored first one, byte for byte. */
async function expectStoredAndReplayed(clientId: string, body: string, status: number) {
  const key = randomUUID();
  const first = await post(clientId, body, key);
  expect(first.status).toBe(status);
  expect(first.headers['content-type']).toBe('application/problem+json');
  expect(Buffer.byteLength(first.body)).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
  const replay = await post(clientId, body, key);
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.status).toBe(status);
  expect(replay.body).toBe(first.body);
  expect(await harness.drain('inbound')).toHaveLength(0);
  return first;
}

describe('review #11: bounded error answers, kept by the idempotency store', () => {
  it('review #11: batches of zeros (2 MB, and 1,000 members) get bounded answers (413, 400), stored and replayed', async () => {
    const zeros = `[${Array.from({ length: 1_000_000 }, () => '0').join(',')}]`;
    expect(zeros.length).toBeGreaterThan(1_999_000);
    // 1,000,000 members: the batch limit answers first, before any member is looked at.
    const answer = await expectStoredAndReplayed('partner-a', zeros, 413);
    expect((answer.json() as { detail: string }).detail).toContain('1000');
    const thousandZeros = `[${Array.from({ length: 1000 }, () => '0').join(',')}]`;
    const invalid = (await expectStoredAndReplayed('partner-a', thousandZeros, 400)).json() as {
      errors: unknown[];
      validationStopped: boolean;
    };
    expect(invalid.errors).toHaveLength(100);
    expect(invalid.validationStopped).toBe(true);
  });

  it('review #11: a batch built for the largest 400 (long names of control characters, many warnings) is stored and replayed', async () => {
    const control = '\u0001'.repeat(200);
    const members = Array.from({ length: 1000 }, (_, i) => {
      const member: Record<string, unknown> = { specversion: '1.0', id: `${i}`, source: '/not-a-urn', type: 'nl.x.y' };
      member[`${control}${i}`] = 1;
      member[`${'a'.repeat(200)}${i}`] = 1;
      return member;
    });
    const body = JSON.stringify(members);
    const answer = (await expectStoredAndReplayed('partner-a', body, 400)).json() as {
      errors: unknown[];
      warnings: unknown[];
    };
    expect(answer.errors.length).toBeGreaterThan(10);
    expect(answer.warnings.length).toBeGreaterThan(0);
  });

  it('review #11: a 403 for 1,000 members with 4 KB ungranted sources is bounded, stored and replayed', async () => {
    const members = Array.from({ length: 1000 }, (_, i) => ({
      specversion: '1.0',
      id: `${i}`,
      source: `urn:nld:oin:1:${'s'.repeat(4000)}${i}`,
      type: 'nl.x.y',
    }));
    const answer = (await expectStoredAndReplayed('partner-c', JSON.stringify(members), 403)).json() as {
      errors: unknown[];
      errorsNotListed: number;
    };
    expect(answer.errors.length + answer.errorsNotListed).toBe(1000);
  });

  it('review #11: the largest possible problem answer fits one idempotency item, with a long client id', async () => {
    // Every string of the problem made as large and as costly to escape as possible.
    const worst = '\u0001'.repeat(100_000);
    const issues = Array.from({ length: 10_000 }, (_, index) => ({
      attribute: worst,
      rule: worst,
      requirement: worst,
      message: worst,
      index,
    }));
    const response = problemResponse({
      type: problemTypeUri('invalid-cloudevent'),
      title: 'Invalid CloudEvent',
      status: 400,
      detail: worst,
      errors: issues,
      warnings: issues,
    });
    expect(Buffer.byteLength(response.body)).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);

    expect(response.status).toBe(400);
    await expectFitsOneIdempotencyItem(response);
  });
});
