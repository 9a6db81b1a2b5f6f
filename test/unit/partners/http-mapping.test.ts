import { describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../../functions/core/http/messages.js';
import {
  changedMeanwhile,
  checkedClientId,
  checkPreconditions,
  directoryFull,
  grantsOverlap,
  notFound,
  partnerResponse,
  readPartnerInput,
} from '../../../functions/core/partners/http-mapping.js';
import type { Partner } from '../../../functions/core/partners/partner.js';
import { MAX_JSON_BODY_BYTES } from '../../../functions/core/subscriptions/json-bounds.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { refusalOf } from '../../support/refusals.js';

function request(
  body: string | unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): HttpRequest {
  return {
    method: 'PUT',
    path: '/clients/school-b',
    headers,
    query: {},
    routeKey: 'PUT /clients/{clientId}',
    pathParameters: { clientId: 'school-b' },
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  };
}

const partner: Partner = {
  clientId: 'school-b',
  publishGrants: ['urn:nld:oin:0002'],
  entitlements: [],
  version: 3,
  createdAt: '2026-11-23T18:00:00.000Z',
  updatedAt: '2026-11-23T18:01:00.000Z',
  updatedBy: 'ops',
};

/** The problem a refused body answers with: status, type and title, what a client acts on. */
function refusal(body: string | unknown, headers?: Record<string, string>) {
  const { status, type, title } = refusalOf(() => readPartnerInput(request(body, headers))).problem;
  return { status, type, title };
}

const invalidClient = { status: 400, type: problemTypeUri('invalid-client'), title: 'Invalid client' };

/** `levels` nested arrays as text (`[[...]]`): too deep for JSON.stringify to build. */
function nested(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}

describe('reading a partner from the admin API body (issue 12)', () => {
  it('issue 12: a client id is 1 to 256 characters', () => {
    expect(checkedClientId('c'.repeat(256))).toBe('c'.repeat(256));
    expect(refusalOf(() => checkedClientId('c'.repeat(257))).problem).toMatchObject(invalidClient);
  });

  it('issue 12: a body that is not application/json is a 415', () => {
    expect(refusal({}, { 'content-type': 'text/plain' }).status).toBe(415);
  });

  it('issue 12: a body up to the JSON body limit is read; one byte more is a 413', () => {
    // Trailing whitespace keeps it valid JSON, so only its size can refuse it.
    expect(readPartnerInput(request('{}'.padEnd(MAX_JSON_BODY_BYTES, ' '))).publishGrants).toEqual([]);
    expect(refusal('{}'.padEnd(MAX_JSON_BODY_BYTES + 1, ' ')).status).toBe(413);
  });

  it('issue 12: a body nested 32 levels deep is read; 33 is refused before anything walks it, not a 500', () => {
    // A grant's unknown members are dropped by the entitlement rules, so the nesting is all that can refuse it.
    const body = (levels: number) => `{"entitlements": [{"typePrefix": "nl.edu.", "extra": ${nested(levels - 3)}}]}`;
    expect(readPartnerInput(request(body(32))).entitlements).toEqual([{ typePrefix: 'nl.edu.' }]);
    expect(refusal(body(33))).toEqual(invalidClient);
    // Deep enough to exhaust the stack of a recursive walk (JSON.stringify of the entitlements).
    expect(refusal(body(200_000))).toEqual(invalidClient);
  });

  it('issue 12: malformed JSON is a 400 malformed-json; JSON that is not an object is a 400 invalid-client', () => {
    expect(refusal('{"publishGrants": [')).toEqual({
      status: 400,
      type: problemTypeUri('malformed-json'),
      title: 'Malformed JSON',
    });
    for (const body of ['5', 'true', '"x"', 'null', '[]']) expect(refusal(body), body).toEqual(invalidClient);
  });

  it('issue 12: a body holds description, publishGrants and entitlements, each optional; anything else is a 400', () => {
    expect(readPartnerInput(request({}))).toEqual({ publishGrants: [], entitlements: [] });
    expect(readPartnerInput(request({ description: 'School B' }))).toEqual({
      description: 'School B',
      publishGrants: [],
      entitlements: [],
    });
    expect(refusal({ publishGrant: [] })).toEqual(invalidClient);
  });

  it('issue 12: a description is a string of at most 1024 characters', () => {
    expect(readPartnerInput(request({ description: 'd'.repeat(1024) })).description).toBe('d'.repeat(1024));
    expect(readPartnerInput(request({ description: '' })).description).toBe('');
    expect(refusal({ description: 'd'.repeat(1025) })).toEqual(invalidClient);
    expect(refusal({ description: 5 })).toEqual(invalidClient);
  });

  it('EDU-IN: publishGrants is a list of at most 100 strings of at most 1024 characters; a repeated grant is kept once', () => {
    const grants = Array.from({ length: 100 }, (_, i) => `urn:nld:oin:${i}`);
    expect(readPartnerInput(request({ publishGrants: grants })).publishGrants).toEqual(grants);
    expect(refusal({ publishGrants: [...grants, 'urn:nld:oin:x'] })).toEqual(invalidClient);
    expect(readPartnerInput(request({ publishGrants: ['g'.repeat(1024), 'g'.repeat(1024)] })).publishGrants).toEqual([
      'g'.repeat(1024),
    ]);
    expect(refusal({ publishGrants: ['g'.repeat(1025)] })).toEqual(invalidClient);
    // A list has a length too: only a string is a grant.
    expect(refusal({ publishGrants: [['urn:nld:oin:0002']] })).toEqual(invalidClient);
    expect(refusal({ publishGrants: [5] })).toEqual(invalidClient);
  });

  it('EDU-7: entitlements are a list of at most 100 grants whose typePrefix and source are at most 1024 characters', () => {
    const grants = Array.from({ length: 100 }, (_, i) => ({ typePrefix: `nl.edu.${i}.` }));
    expect(readPartnerInput(request({ entitlements: grants })).entitlements).toEqual(grants);
    expect(refusal({ entitlements: [...grants, { typePrefix: 'nl.' }] })).toEqual(invalidClient);
    const longest = { typePrefix: 't'.repeat(1024), source: 's'.repeat(1024) };
    expect(readPartnerInput(request({ entitlements: [longest] })).entitlements).toEqual([longest]);
    expect(refusal({ entitlements: [{ typePrefix: 't'.repeat(1025) }] })).toEqual(invalidClient);
    expect(refusal({ entitlements: [{ typePrefix: 'nl.', source: 's'.repeat(1025) }] })).toEqual(invalidClient);
    expect(refusal({ entitlements: {} })).toEqual(invalidClient);
  });
});

describe('the partner as the admin API shows it (issue 12)', () => {
  it('issue 12: the view holds the partner and its bookkeeping, the description only when it has one, and the version as ETag', () => {
    const plain = partnerResponse(200, partner);
    expect(plain.headers['etag']).toBe('"3"');
    expect(JSON.parse(plain.body)).toEqual({
      clientId: 'school-b',
      publishGrants: ['urn:nld:oin:0002'],
      entitlements: [],
      version: 3,
      createdAt: '2026-11-23T18:00:00.000Z',
      updatedAt: '2026-11-23T18:01:00.000Z',
      updatedBy: 'ops',
    });
    expect(JSON.parse(partnerResponse(200, { ...partner, description: 'School B' }).body)).toMatchObject({
      description: 'School B',
    });
  });
});

describe('preconditions of a change (issue 12)', () => {
  const precondition = (headers: Record<string, string>, current: Partner | undefined) => () =>
    checkPreconditions(request({}, headers), current);
  const failed = { status: 412, type: problemTypeUri('precondition-failed'), title: 'Precondition Failed' };

  it('issue 12: If-None-Match: * creates only; it does not stop the create of a client not yet there', () => {
    expect(precondition({ 'if-none-match': '*' }, undefined)).not.toThrow();
    expect(refusalOf(precondition({ 'if-none-match': ' * ' }, partner)).problem).toMatchObject(failed);
  });

  it('issue 12: If-Match names the current version, with or without spaces around it, or * for any existing one', () => {
    expect(precondition({ 'if-match': ' "3" ' }, partner)).not.toThrow();
    expect(precondition({ 'if-match': '*' }, partner)).not.toThrow();
    expect(refusalOf(precondition({ 'if-match': '"2"' }, partner)).problem).toMatchObject(failed);
    expect(refusalOf(precondition({ 'if-match': '*' }, undefined)).problem).toMatchObject(failed);
  });
});

describe('the refusals of the admin API (issue 12)', () => {
  it('issue 12: each refusal has its status, type and title', () => {
    const shape = (error: { problem: { status: number; type: string; title: string } }) => {
      const { status, type, title } = error.problem;
      return { status, type, title };
    };
    expect(shape(notFound('nobody'))).toMatchObject({ status: 404, type: problemTypeUri('not-found') });
    expect(shape(grantsOverlap([]))).toEqual({
      status: 409,
      type: problemTypeUri('publish-grants-overlap'),
      title: 'Publish grants overlap',
    });
    expect(shape(changedMeanwhile())).toEqual({
      status: 409,
      type: problemTypeUri('directory-changed'),
      title: 'Directory changed',
    });
    expect(shape(directoryFull())).toEqual({
      status: 409,
      type: problemTypeUri('directory-full'),
      title: 'Directory full',
    });
  });
});
