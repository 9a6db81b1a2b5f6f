/**
 * How the lean S3 client (functions/aws/s3-requests.ts) takes S3's answers, over a real local
 * HTTP server that answers as S3 does: absent objects, errors that name S3's code and status and
 * nothing secret, and the SDK's standard retries (issue 15, item 4).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { standardRetry } from '../../../functions/aws/lean-client-support.js';
import { S3Requests } from '../../../functions/aws/s3-requests.js';
import { startAwsServiceStub, type AwsServiceStub } from '../../support/aws-service-stub.js';

const CREDENTIALS = { accessKeyId: 'AKIDANSWERTEST', secretAccessKey: 'answer-test-secret-key' };

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

let stub: AwsServiceStub;
let endpoint: string;
let answers: Answer[];
let seen: { method: string; url: string }[];
let bodies: string[];

const xmlError =
  (status: number, code: string): Answer =>
  (_, response) => {
    response
      .writeHead(status, { 'content-type': 'application/xml' })
      .end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>m</Message></Error>`);
  };
const ok =
  (body = 'stored', headers: Record<string, string> = {}): Answer =>
  (_, response) => {
    response.writeHead(200, headers).end(body);
  };

beforeAll(async () => {
  stub = await startAwsServiceStub((request, response, body) => {
    seen.push({ method: request.method!, url: request.url! });
    bodies.push(body);
    (answers.shift() ?? xmlError(500, 'NoAnswerLeft'))(request, response);
  });
  endpoint = stub.endpoint;
});
afterAll(() => stub.close());
beforeEach(() => {
  answers = [];
  seen = [];
  bodies = [];
});

const client = () => new S3Requests({ region: 'eu-west-1', endpoint, credentials: CREDENTIALS });

describe('issue 15, item 4: the lean S3 client and what S3 answers', () => {
  it('issue 15: a key is sent path-style to the endpoint, each segment URI-encoded and its slashes kept', async () => {
    answers = [ok('x')];
    const s3 = client();
    await s3.getObject('payloads', 'archive/2026 11/a+b');
    s3.destroy();
    expect(seen).toEqual([{ method: 'GET', url: '/payloads/archive/2026%2011/a%2Bb?x-id=GetObject' }]);
  });

  it('issue 15: GetObject of a missing key (404 NoSuchKey) and HeadObject of one (404, no body) are absent, not errors', async () => {
    answers = [xmlError(404, 'NoSuchKey'), (_, response) => void response.writeHead(404).end()];
    const s3 = client();
    expect(await s3.getObject('payloads', 'payloads/gone')).toBeUndefined();
    expect(await s3.headObject('payloads', 'uploads/gone')).toBeUndefined();
    s3.destroy();
    expect(seen.map((request) => request.method)).toEqual(['GET', 'HEAD']);
  });

  it('issue 15: a 404 for a missing bucket is an error, not an absent object', async () => {
    answers = [xmlError(404, 'NoSuchBucket')];
    const s3 = client();
    await expect(s3.getObject('nobucket', 'k')).rejects.toThrow('S3 GetObject failed: NoSuchBucket (HTTP 404)');
    s3.destroy();
  });

  it('issue 15: a refusal throws at once with S3 code and status, and the message holds no URL, host or credentials', async () => {
    answers = [xmlError(403, 'AccessDenied')];
    const s3 = client();
    const error = await s3
      .putObject({ bucket: 'payloads', key: 'payloads/a', body: Buffer.from('x'), contentType: 'text/plain' })
      .catch((e: unknown) => e as Error);
    s3.destroy();
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toBe('S3 PutObject failed: AccessDenied (HTTP 403)');
    for (const secret of ['127.0.0.1', 'payloads/a', 'X-Amz', CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey])
      expect(error!.message).not.toContain(secret);
    expect(seen).toHaveLength(1);
  });

  it('issue 15: throttling and 5xx are retried as the SDK does, three attempts in all', async () => {
    answers = [xmlError(503, 'SlowDown'), xmlError(500, 'InternalError'), ok('third time')];
    const s3 = client();
    expect((await s3.getObject('payloads', 'payloads/a'))?.body.toString()).toBe('third time');
    answers = [xmlError(503, 'SlowDown'), xmlError(503, 'SlowDown'), xmlError(503, 'SlowDown'), ok()];
    await expect(s3.getObject('payloads', 'payloads/b')).rejects.toThrow('S3 GetObject failed: SlowDown (HTTP 503)');
    s3.destroy();
    expect(seen).toHaveLength(6);
  });

  it('issue 15 #5: every request sent is observed, each retry its own, as S3 bills them (the cost model counts with it)', async () => {
    answers = [xmlError(500, 'InternalError'), ok(''), ok('twelve bytes')];
    const s3 = client();
    const attempts: unknown[] = [];
    s3.observeAttempts((attempt) => attempts.push(attempt));
    await s3.putObject({ bucket: 'payloads', key: 'payloads/a', body: Buffer.from('body'), contentType: 'text/plain' });
    await s3.getObject('payloads', 'payloads/a');
    s3.destroy();
    expect(attempts).toEqual([
      { operation: 'PutObject', requestBytes: 4, responseBytes: expect.any(Number) as number },
      { operation: 'PutObject', requestBytes: 4, responseBytes: 0 },
      { operation: 'GetObject', requestBytes: 0, responseBytes: 12 },
    ]);
  });

  it('issue 15: a 5xx the SDK does not retry (501) fails at once, as a 4xx does', async () => {
    answers = [xmlError(501, 'NotImplemented'), ok()];
    const s3 = client();
    await expect(s3.getObject('payloads', 'payloads/a')).rejects.toThrow('S3 GetObject failed: NotImplemented (HTTP 501)');
    s3.destroy();
    expect(seen).toHaveLength(1);
  });

  it("issue 15: the SDK's standard mode: throttling backs off under 1 s at first, transient answers under 50 ms, anything else is not retried", () => {
    expect(standardRetry(503, 'SlowDown')).toEqual({ kind: 'throttling', firstCeilingMs: 1000 });
    expect(standardRetry(400, 'ThrottlingException')).toEqual({ kind: 'throttling', firstCeilingMs: 1000 });
    expect(standardRetry(429, '')).toEqual({ kind: 'throttling', firstCeilingMs: 1000 });
    for (const status of [500, 502, 503, 504]) expect(standardRetry(status, 'InternalError')).toEqual({ kind: 'transient', firstCeilingMs: 50 });
    expect(standardRetry(400, 'RequestTimeout')).toEqual({ kind: 'transient', firstCeilingMs: 50 });
    for (const status of [400, 403, 404, 501, 505]) expect(standardRetry(status, 'Whatever')).toBeUndefined();
  });

  it('issue 15: a connection reset mid-request is retried', async () => {
    answers = [(request) => request.socket.destroy(), ok('after the reset')];
    const s3 = client();
    expect((await s3.getObject('payloads', 'payloads/a'))?.body.toString()).toBe('after the reset');
    s3.destroy();
    expect(seen).toHaveLength(2);
  });

  it('issue 15: a retried PutObject goes out again whole: signed, with its length and body', async () => {
    const authorizations: string[] = [];
    const recording =
      (then: Answer): Answer =>
      (request, response) => {
        authorizations.push(String(request.headers['authorization']));
        expect([request.headers['content-length'], bodies.shift()]).toEqual(['4', 'body']);
        then(request, response);
      };
    answers = [recording(xmlError(500, 'InternalError')), recording(ok())];
    const s3 = client();
    await s3.putObject({ bucket: 'payloads', key: 'payloads/a', body: Buffer.from('body'), contentType: 'text/plain' });
    s3.destroy();
    expect(authorizations).toHaveLength(2);
    for (const authorization of authorizations)
      expect(authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDANSWERTEST\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=[^,]*content-length;content-type;host;/,
      );
  });
});
