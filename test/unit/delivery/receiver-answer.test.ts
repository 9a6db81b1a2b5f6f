/**
 * Issue 30 item 2: what an attempt record keeps of a receiver's answer — the first 2 KB of its
 * body, cut between characters, its content type, and only the headers that explain an outcome.
 */
import { describe, expect, it } from 'vitest';
import {
  ANSWER_EXCERPT_BYTES,
  ANSWER_HEADER_CHARACTERS,
  receiverAnswerOf,
} from '../../../functions/core/delivery/receiver-answer.js';
import {
  KEPT_ATTEMPTS,
  withKeptAttempt,
  type AttemptRecord,
} from '../../../functions/core/delivery/delivery-records.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('a receiver answer as an attempt keeps it', () => {
  it('SELF-2, issue 30 item 2: keeps a short body whole, with its content type', () => {
    const answer = receiverAnswerOf(
      { 'content-type': 'application/problem+json' },
      bytes('{"title":"schoolcode onbekend"}'),
    );
    expect(answer).toEqual({ body: '{"title":"schoolcode onbekend"}', contentType: 'application/problem+json' });
  });

  it('SELF-2, issue 30 item 2: keeps the first 2 KB of a long body and says it was cut', () => {
    const answer = receiverAnswerOf({}, bytes('x'.repeat(ANSWER_EXCERPT_BYTES + 500)));
    expect(answer.body).toBe('x'.repeat(ANSWER_EXCERPT_BYTES));
    expect(answer.truncated).toBe(true);
  });

  it('SELF-2, issue 30 item 2: never ends the excerpt inside a UTF-8 character', () => {
    // 'ë' is two bytes: placed so that the 2,048-byte boundary falls between them.
    const body = `${'a'.repeat(ANSWER_EXCERPT_BYTES - 1)}ëëë`;
    const answer = receiverAnswerOf({}, bytes(body));
    expect(answer.body).toBe('a'.repeat(ANSWER_EXCERPT_BYTES - 1));
    expect(answer.body).not.toContain('\uFFFD');
    expect(answer.truncated).toBe(true);
    // A boundary at a character's start keeps the whole character before it.
    const even = receiverAnswerOf({}, bytes(`${'a'.repeat(ANSWER_EXCERPT_BYTES - 2)}ëë`));
    expect(even.body).toBe(`${'a'.repeat(ANSWER_EXCERPT_BYTES - 2)}ë`);
  });

  it('SELF-2, issue 30 item 2: keeps Retry-After and WebHook-* headers and no other header', () => {
    const answer = receiverAnswerOf(
      {
        'content-type': 'text/plain',
        'retry-after': '120',
        'webhook-allowed-rate': '60',
        'set-cookie': 'session=geheim',
        'www-authenticate': 'Bearer realm="intern"',
        server: 'nginx/1.25.3',
        location: 'https://intern.example/?token=abc',
      },
      bytes('later'),
    );
    expect(answer.headers).toEqual({ 'retry-after': '120', 'webhook-allowed-rate': '60' });
    expect(JSON.stringify(answer)).not.toMatch(/geheim|intern|nginx/);
  });

  it('SELF-2, issue 30 item 2: bounds the kept header values and an unread body', () => {
    const answer = receiverAnswerOf({ 'content-type': `text/plain; ${'p'.repeat(1000)}` }, undefined);
    expect(answer.contentType).toHaveLength(ANSWER_HEADER_CHARACTERS);
    expect(answer).toMatchObject({ body: '', truncated: true });
  });
});

describe('the attempts a progress or dead letter keeps', () => {
  const attempt = (n: number): AttemptRecord => ({
    subscriptionId: 's',
    deliveryId: 'd',
    attempt: n,
    at: new Date(n * 1000).toISOString(),
    outcome: 'retrying',
    status: 500,
    latencyMs: 3,
    answer: { body: `answer ${n}` },
    events: [{ source: 'urn:x', id: String(n), type: 't' }],
  });

  it('SELF-2, issue 30 item 2: keeps the answer on the newest attempt only, and at most KEPT_ATTEMPTS', () => {
    let kept: AttemptRecord[] = [];
    for (let n = 1; n <= KEPT_ATTEMPTS + 3; n++) kept = withKeptAttempt(kept, attempt(n));
    expect(kept).toHaveLength(KEPT_ATTEMPTS);
    expect(kept.map((a) => a.attempt)).toEqual(Array.from({ length: KEPT_ATTEMPTS }, (_, i) => i + 4));
    expect(kept.filter((a) => a.answer)).toEqual([expect.objectContaining({ attempt: KEPT_ATTEMPTS + 3 })]);
    expect(kept.some((a) => a.events)).toBe(false);
  });
});
