/**
 * The HTTP answer shapes every app builds on: a JSON answer must say it is JSON, an empty answer
 * (204, the validation handshake's 200) must have no body, and an absent Content-Type is no media type.
 */
import { describe, expect, it } from 'vitest';
import { emptyResponse, jsonResponse, mediaTypeOf } from '../../../functions/core/http/messages.js';

describe('HTTP answer shapes', () => {
  it('answer shapes: a JSON answer (the 202 among them) carries Content-Type application/json, which its own headers may replace', () => {
    expect(jsonResponse(202, { acceptedCount: 0 })).toEqual({
      status: 202,
      headers: { 'content-type': 'application/json' },
      body: '{"acceptedCount":0}',
    });
    expect(jsonResponse(200, {}, { 'content-type': 'application/vnd.oai.openapi+json', etag: '"1"' }).headers).toEqual({
      'content-type': 'application/vnd.oai.openapi+json',
      etag: '"1"',
    });
  });

  it('WH-7: an empty answer has an empty body and only the headers given', () => {
    expect(emptyResponse(204)).toEqual({ status: 204, headers: {}, body: '' });
    expect(emptyResponse(200, { allow: 'POST, OPTIONS' })).toEqual({
      status: 200,
      headers: { allow: 'POST, OPTIONS' },
      body: '',
    });
  });

  it('HTTP-1: the media type of a Content-Type is lower case without parameters; an absent or empty header has none', () => {
    expect(mediaTypeOf(' Application/CloudEvents+JSON ; charset=utf-8')).toBe('application/cloudevents+json');
    expect(mediaTypeOf('text/plain')).toBe('text/plain');
    expect(mediaTypeOf(undefined)).toBe('');
    expect(mediaTypeOf('')).toBe('');
  });
});
