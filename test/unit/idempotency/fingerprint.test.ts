import { describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../../functions/core/http/messages.js';
import { requestFingerprint } from '../../../functions/core/idempotency/index.js';

const OP = 'POST /events';

function request(over: Partial<HttpRequest> = {}): HttpRequest {
  return {
    method: 'POST',
    path: '/events',
    headers: {},
    query: {},
    routeKey: 'POST /events',
    pathParameters: {},
    body: Buffer.from('{}'),
    ...over,
  };
}

const binary = (headers: Record<string, string>, body = '<x/>') =>
  request({
    headers: {
      'content-type': 'application/xml',
      'ce-specversion': '1.0',
      'ce-id': 'e-1',
      'ce-source': 'urn:nld:oin:00000001234567890000',
      'ce-type': 'nl.example.thing.created',
      'idempotency-key': '3f2b8c1e-9d4a-4b6e-8f10-2a7c5e9d1b34',
      ...headers,
    },
    body: Buffer.from(body),
  });

describe('requestFingerprint', () => {
  it('EDU-IDEM-8: is a SHA-256 hex digest and stable for the same request', () => {
    const fp = requestFingerprint(binary({}), OP);
    expect(fp).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint(binary({}), OP)).toBe(fp);
  });

  it('EDU-IDEM-8: changes with the body, even by one byte', () => {
    const structured = (body: string) =>
      request({ headers: { 'content-type': 'application/cloudevents+json' }, body: Buffer.from(body) });
    expect(requestFingerprint(structured('{"id":"1"}'), OP)).not.toBe(requestFingerprint(structured('{"id":"2"}'), OP));
    expect(requestFingerprint(structured('{"id":"1"}'), OP)).not.toBe(
      requestFingerprint(structured('{"id":"1"} '), OP),
    );
  });

  it('EDU-IDEM-8: in binary mode a changed, added or removed ce- header changes it', () => {
    const base = requestFingerprint(binary({}), OP);
    expect(requestFingerprint(binary({ 'ce-type': 'nl.example.thing.deleted' }), OP)).not.toBe(base);
    expect(requestFingerprint(binary({ 'ce-subject': 'student/42' }), OP)).not.toBe(base);
    const { 'ce-id': _id, ...withoutId } = binary({}).headers;
    expect(requestFingerprint(request({ headers: withoutId, body: Buffer.from('<x/>') }), OP)).not.toBe(base);
  });

  it('EDU-IDEM-8: the case of the Content-Type does not change it', () => {
    const body = Buffer.from('{"id":"1"}');
    expect(
      requestFingerprint(
        request({ headers: { 'content-type': 'Application/CloudEvents+JSON; Charset=UTF-8' }, body }),
        OP,
      ),
    ).toBe(
      requestFingerprint(
        request({ headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' }, body }),
        OP,
      ),
    );
  });

  it('EDU-IDEM-8: in binary mode the Content-Type (datacontenttype) changes it', () => {
    expect(requestFingerprint(binary({ 'content-type': 'text/xml' }), OP)).not.toBe(requestFingerprint(binary({}), OP));
  });

  it('EDU-IDEM-8: headers that are not part of the event do not change it', () => {
    const base = requestFingerprint(binary({}), OP);
    expect(
      requestFingerprint(
        binary({ authorization: 'Bearer another-token', 'user-agent': 'retry/2', 'x-request-id': 'r-9' }),
        OP,
      ),
    ).toBe(base);
  });

  it('EDU-IDEM-8: header order does not change it', () => {
    const headers = binary({}).headers;
    const reversed = Object.fromEntries(Object.entries(headers).reverse());
    expect(requestFingerprint(request({ headers: reversed, body: Buffer.from('<x/>') }), OP)).toBe(
      requestFingerprint(binary({}), OP),
    );
  });

  it('EDU-IDEM-8: in structured mode ce- headers are not part of the event (HTTP-5) and do not change it', () => {
    const structured = (headers: Record<string, string>) =>
      request({
        headers: { 'content-type': 'application/cloudevents+json; charset=utf-8', ...headers },
        body: Buffer.from('{"id":"1"}'),
      });
    expect(requestFingerprint(structured({ 'ce-id': 'other' }), OP)).toBe(requestFingerprint(structured({}), OP));
  });

  it('EDU-IDEM-8: the method, operation, path and query are part of the request', () => {
    const base = requestFingerprint(request(), OP);
    expect(requestFingerprint(request({ method: 'PATCH' }), OP)).not.toBe(base);
    expect(requestFingerprint(request(), 'POST /subscriptions')).not.toBe(base);
    expect(requestFingerprint(request({ path: '/events/2' }), OP)).not.toBe(base);
    expect(requestFingerprint(request({ query: { dryRun: 'true' } }), OP)).not.toBe(base);
  });
});
