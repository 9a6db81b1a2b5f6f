import { describe, expect, it } from 'vitest';
import { unroutedAnswer } from '../../../functions/app/http-app.js';
import type { HttpRequest } from '../../../functions/core/http/messages.js';

const request = (method: string, path: string): HttpRequest => ({
  method,
  path,
  routeKey: '$default',
  headers: {},
  query: {},
  pathParameters: {},
  body: Buffer.alloc(0),
});

describe("the $default answer, from functions/config/resources.ts's route table (issue 9: one route table)", () => {
  it('CARD-3: a path a route template matches, with another method → 405 listing the methods of that template', () => {
    const answer = unroutedAnswer(request('PUT', '/v1/subscriptions/42'));
    expect(answer.status).toBe(405);
    expect(answer.headers['allow']).toBe('GET, PATCH, DELETE');
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ status: 405 });
    expect(unroutedAnswer(request('DELETE', '/v1/subscriptions')).headers['allow']).toBe('POST, GET');
    expect(unroutedAnswer(request('GET', '/v1/deliveries/dead-letter-queue/redrive')).headers['allow']).toBe('POST');
  });

  it('CARD-3: a path no template matches (a trailing slash included) → 404 problem naming the path', () => {
    for (const path of [
      '/v1/nothing/here',
      '/v1/subscriptions/',
      '/v1/subscriptions/42/',
      '/v1/events/x',
      '/',
      '/v1',
      '/subscriptions/42',
      '/events',
    ]) {
      const answer = unroutedAnswer(request('GET', path));
      expect(answer.status, path).toBe(404);
      expect(answer.headers['allow'], path).toBeUndefined();
      expect(JSON.parse(answer.body), path).toMatchObject({ status: 404, detail: `There is no resource at ${path}.` });
    }
  });
});
