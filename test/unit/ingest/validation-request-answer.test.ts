/**
 * The receiving side of the webhook validation handshake (WH-7): OPTIONS /events as the ingest's
 * app answers it. The origin allow list is the only thing between a stranger and consent, so each
 * branch is checked here without the emulators the integration test needs.
 */
import { describe, expect, it } from 'vitest';
import type { KoerierError } from '../../../functions/core/http/problems.js';
import {
  answerValidationRequest,
  type ValidationPolicy,
} from '../../../functions/core/webhooks/answer-validation-request.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { refusalOf } from '../../support/refusals.js';

const METHODS = ['POST', 'OPTIONS'];
const policy = (allowedOrigins: string[]): ValidationPolicy => ({ allowedOrigins, ratePerMinute: 120 });

/** The thrown refusal, for its problem and headers. */
const refusal = (headers: Record<string, string>, allowed: ValidationPolicy): KoerierError =>
  refusalOf(() => answerValidationRequest(headers, allowed, METHODS));

describe('WH-7: the ingest answers the validation request', () => {
  it('WH-7: a plain OPTIONS (no or a blank WebHook-Request-Origin) gets 204 with Allow and no consent', () => {
    for (const headers of [{}, { 'webhook-request-origin': '   ' }]) {
      expect(answerValidationRequest(headers, policy(['partner.example']), METHODS), JSON.stringify(headers)).toEqual({
        status: 204,
        headers: { allow: 'POST, OPTIONS' },
        body: '',
      });
    }
  });

  it('WH-7: an allowed origin gets 200 with WebHook-Allowed-Origin (as sent, trimmed) and WebHook-Allowed-Rate', () => {
    expect(
      answerValidationRequest(
        { 'webhook-request-origin': 'partner.example' },
        policy(['other.example', 'partner.example']),
        METHODS,
      ),
    ).toEqual({
      status: 200,
      headers: { allow: 'POST, OPTIONS', 'webhook-allowed-origin': 'partner.example', 'webhook-allowed-rate': '120' },
      body: '',
    });
    // Host names are case-insensitive: the list and the header may differ in case and the answer echoes the header.
    expect(
      answerValidationRequest({ 'webhook-request-origin': ' Partner.EXAMPLE ' }, policy(['PARTNER.example']), METHODS)
        .headers,
    ).toMatchObject({
      'webhook-allowed-origin': 'Partner.EXAMPLE',
    });
  });

  it('WH-7: `*` in the allow list consents to any origin', () => {
    const answer = answerValidationRequest({ 'webhook-request-origin': 'anyone.example' }, policy(['*']), METHODS);
    expect(answer.status).toBe(200);
    expect(answer.headers['webhook-allowed-origin']).toBe('anyone.example');
  });

  it('WH-7: an origin not in the list is refused with 403 origin-not-allowed, Allow and no consent headers', () => {
    const error = refusal(
      { 'webhook-request-origin': 'stranger.example' },
      policy(['partner.example', 'other.example']),
    );
    expect(error.problem).toMatchObject({
      type: problemTypeUri('origin-not-allowed'),
      title: 'Origin not allowed',
      status: 403,
    });
    expect(error.headers).toEqual({ allow: 'POST, OPTIONS' });
    // A list that names no one refuses everyone, `*` only counts when it is an entry of its own.
    expect(refusal({ 'webhook-request-origin': 'partner.example' }, policy([])).problem.status).toBe(403);
    expect(refusal({ 'webhook-request-origin': 'partner.example' }, policy(['*.example'])).problem.status).toBe(403);
  });
});
