/**
 * Issue 36, item 11, through the API on the laptop host (dynalite): the conditions' budget counts
 * the UTF-8 bytes of their JSON form, as the subscription item and the route index store them. 32
 * types of 1,021 control characters are 32,672 characters but 196 KB of JSON (each a six-byte
 * `\u00XX` escape): refused with a 400 naming `types`, on a create and on a PATCH; types escaped up
 * to the budget are accepted and stored, and the subscription still routes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { MAX_CONDITIONS_BYTES } from '../../functions/core/subscriptions/subscription-input.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi } from '../support/koerier-api.js';

let koerier: TestHost;
let token: string;

beforeAll(async () => {
  koerier = await startTestHost({ [settingEnv.validationAgreedClients]: 'dev-subscriber' });
  token = await koerier.token('dev-subscriber', ['subscriptions:manage']);
});

afterAll(async () => {
  await koerier?.stop();
});

async function call(
  method: string,
  path: string,
  body: unknown,
): Promise<{ status: number; contentType: string | null; body: Record<string, unknown> }> {
  const answer = await callApi(koerier.url, token, method, path, body, {
    'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
  });
  return { status: answer.status, contentType: answer.headers.get('content-type'), body: answer.body };
}

const sizeOf = (types: readonly string[]) => Buffer.byteLength(JSON.stringify([undefined, types, undefined]));
const controlTypes = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x0e + (i % 16)).repeat(1021));
const base = {
  sink: 'https://ontvanger.example/hook',
  validation: 'agreed',
  sinkcredential: {
    credentialtype: 'CLIENTCREDENTIALS',
    tokenurl: 'https://idp.example/token',
    clientid: 'koerier',
    clientsecret: 'budget-s3cret',
  },
};

describe('subscription conditions budget through the API (issue 36, item 11)', () => {
  it('EDU-14, issue 36 item 11: 32 types of 1,021 control characters (196 KB as JSON) are refused with a 400 naming types, on create and on PATCH', async () => {
    expect(sizeOf(controlTypes)).toBeGreaterThan(MAX_CONDITIONS_BYTES);
    const refused = await call('POST', '/subscriptions', { ...base, types: controlTypes });
    expect(refused.status).toBe(400);
    expect(refused.contentType).toBe('application/problem+json');
    expect(refused.body['errors']).toEqual([expect.objectContaining({ attribute: 'types', rule: 'too-large' })]);

    const created = await call('POST', '/subscriptions', { ...base, types: ['nl.example.budget.v1'] });
    expect(created.status).toBe(201);
    const patched = await call('PATCH', `/subscriptions/${created.body['id'] as string}`, { types: controlTypes });
    expect(patched.status).toBe(400);
    expect(patched.body['errors']).toEqual([expect.objectContaining({ attribute: 'types', rule: 'too-large' })]);
  });

  it('EDU-14, issue 36 item 11: escaped types up to the budget are accepted and stored in the table and the route index, and read back as given', async () => {
    const types = controlTypes.slice(0, 20);
    while (MAX_CONDITIONS_BYTES - sizeOf([...types, 'x']) >= 1024)
      types.push(`nl.example.${randomUUID()}.`.padEnd(1024, 'x'));
    types.push('y'.repeat(MAX_CONDITIONS_BYTES - sizeOf([...types, ''])));
    expect(sizeOf(types)).toBe(MAX_CONDITIONS_BYTES);
    const created = await call('POST', '/subscriptions', { ...base, types });
    expect(created.status).toBe(201);
    const read = await fetch(`${koerier.url}/subscriptions/${created.body['id'] as string}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { types: string[] }).types).toEqual(types);
  });
});
