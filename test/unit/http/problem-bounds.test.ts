/**
 * Every problem answer is bounded (docs/HARDENING.md, item 11): the idempotency guard stores an
 * answer whole in one DynamoDB item to replay it (EDU-IDEM-14), so `problemResponse` cuts texts,
 * lists at most MAX_LISTED_ISSUES issues per list and stays within MAX_PROBLEM_BYTES, counting
 * what it leaves out. The adversarial parser tests reach this through the CloudEvents validator;
 * these drive it directly, at its edges, fast enough to run for every mutant.
 */
import { describe, expect, it } from 'vitest';
import {
  boundedIssues,
  MAX_LISTED_ISSUES,
  MAX_PROBLEM_BYTES,
  problem,
  problemResponse,
  problems,
  type Problem,
  type ValidationIssue,
} from '../../../functions/core/http/problems.js';
import { problemTypeUri } from '../../support/problem-types.js';

/** Longest detail, message and pointer kept; longest attribute (functions/core/http/problems.ts). */
const MESSAGE_CHARACTERS = 512;
const ATTRIBUTE_CHARACTERS = 64;

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const answerOf = (p: Problem) =>
  JSON.parse(problemResponse(p).body) as Record<string, unknown> & {
    errors?: ValidationIssue[];
    warnings?: ValidationIssue[];
  };
const finding = (i: number, extra: Partial<ValidationIssue> = {}): ValidationIssue => ({
  rule: 'required',
  requirement: 'CE-3',
  message: `finding ${i}`,
  index: i,
  ...extra,
});
const invalid = (errors: ValidationIssue[], extra: Record<string, unknown> = {}) =>
  problem(400, 'invalid-cloudevent', 'The request holds invalid events.', { errors, ...extra });

describe('EDU-IDEM-14: problem answers are bounded so they can be stored and replayed whole', () => {
  it('EDU-IDEM-14: a problem within its bounds is answered exactly as built: no counters, nothing cut', () => {
    const within = invalid(
      [
        finding(0),
        finding(1, { attribute: 'a'.repeat(ATTRIBUTE_CHARACTERS), pointer: `/${'p'.repeat(MESSAGE_CHARACTERS - 1)}` }),
      ],
      {
        warnings: [finding(2, { message: 'm'.repeat(MESSAGE_CHARACTERS) })],
      },
    );
    expect(problemResponse(within).body).toBe(JSON.stringify(within));
    // Without a detail (problem() leaves the member undefined) and without any list.
    const bare = problem(409, 'subscription-changed');
    expect(answerOf(bare)).toEqual({
      type: problemTypeUri('subscription-changed'),
      title: 'Subscription changed',
      status: 409,
    });
  });

  it('EDU-IDEM-14: a detail, message or pointer past 512 characters and an attribute past 64 are cut with …, the rest of the finding kept', () => {
    const cut = (text: string, characters: number) => `${text.slice(0, characters)}…`;
    const long = 'x'.repeat(MESSAGE_CHARACTERS + 1);
    const name = 'n'.repeat(ATTRIBUTE_CHARACTERS + 1);
    const pointer = `/${'q'.repeat(MESSAGE_CHARACTERS)}`;
    const answer = answerOf({
      ...invalid([
        finding(0, { message: long }),
        finding(1, { attribute: name }),
        finding(2, { pointer }),
        finding(3, { attribute: name, message: long, pointer }),
      ]),
      detail: long,
    });
    expect(answer['detail']).toBe(cut(long, MESSAGE_CHARACTERS));
    expect(answer.errors).toEqual([
      finding(0, { message: cut(long, MESSAGE_CHARACTERS) }),
      finding(1, { attribute: cut(name, ATTRIBUTE_CHARACTERS) }),
      finding(2, { pointer: cut(pointer, MESSAGE_CHARACTERS) }),
      finding(3, {
        attribute: cut(name, ATTRIBUTE_CHARACTERS),
        message: cut(long, MESSAGE_CHARACTERS),
        pointer: cut(pointer, MESSAGE_CHARACTERS),
      }),
    ]);
  });

  it(`EDU-IDEM-14: at most ${MAX_LISTED_ISSUES} findings are listed, the first ones; the others are counted in errorsNotListed, added to a count the problem already had`, () => {
    const many = Array.from({ length: MAX_LISTED_ISSUES + 50 }, (_, i) => finding(i));
    const answer = answerOf(invalid(many));
    expect(answer.errors).toEqual(many.slice(0, MAX_LISTED_ISSUES));
    expect(answer['errorsNotListed']).toBe(50);
    // A validator that stopped early counts what it never listed; bounding adds to it rather than replacing it.
    expect(answerOf(invalid(many, { errorsNotListed: 50 }))['errorsNotListed']).toBe(100);
    expect(answerOf(invalid([finding(0)], { errorsNotListed: 7 }))['errorsNotListed']).toBe(7);
  });

  it(`EDU-IDEM-14: whatever the sizes of the findings and of the rest of the problem, the body stays within ${MAX_PROBLEM_BYTES} bytes and every finding is listed or counted`, () => {
    // Findings of about 700 bytes, so the byte budget binds before the count does; the first one's
    // size steps through the budget so that the last finding that fits lands at every distance from the edge.
    for (let extra = 0; extra < 700; extra += 10) {
      for (const frame of [0, 20_000]) {
        const errors = Array.from({ length: 150 }, (_, i) =>
          finding(i, {
            message: 'e'.repeat(i === 0 ? extra : 480),
            attribute: 'a'.repeat(60),
            pointer: `/${'p'.repeat(100)}`,
          }),
        );
        const p = invalid(errors, { instance: 'i'.repeat(frame) });
        const body = problemResponse(p).body;
        expect(Buffer.byteLength(body), `extra ${extra}, frame ${frame}`).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
        const answer = JSON.parse(body) as { errors: ValidationIssue[]; errorsNotListed: number };
        expect(answer.errors.length + answer.errorsNotListed).toBe(150);
        // Not much room is wasted either: one more finding would not have fitted.
        expect(
          Buffer.byteLength(body) + bytesOf(errors[answer.errors.length]) + 1,
          `extra ${extra}, frame ${frame}`,
        ).toBeGreaterThan(MAX_PROBLEM_BYTES - 256);
      }
    }
  });

  it(`EDU-IDEM-14: errors and warnings share the one budget of ${MAX_PROBLEM_BYTES} bytes`, () => {
    const big = (i: number) => finding(i, { message: 'w'.repeat(500) });
    const errors = Array.from({ length: 200 }, (_, i) => big(i));
    const warnings = Array.from({ length: 200 }, (_, i) => big(i));
    const body = problemResponse(invalid(errors, { warnings })).body;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
    const answer = JSON.parse(body) as {
      errors: unknown[];
      errorsNotListed: number;
      warnings: unknown[];
      warningsNotListed: number;
    };
    expect(answer.errors.length + answer.errorsNotListed).toBe(200);
    expect(answer.warnings.length + answer.warningsNotListed).toBe(200);
  });

  it('EDU-IDEM-14: boundedIssues lists the first findings that fit maxBytes of JSON, and stops only where the next would not fit', () => {
    const issues = Array.from({ length: 60 }, (_, i) => finding(i, { message: 'm'.repeat(i % 7) }));
    for (let maxBytes = 2; maxBytes < 3000; maxBytes++) {
      const { listed, notListed } = boundedIssues(issues, maxBytes);
      expect(listed).toEqual(issues.slice(0, listed.length));
      expect(listed.length + notListed).toBe(issues.length);
      expect(bytesOf(listed), `maxBytes ${maxBytes}`).toBeLessThanOrEqual(maxBytes);
      // The JSON of one more would have reached the limit (the count keeps one byte in hand).
      expect(bytesOf([...listed, issues[listed.length]]) + 1, `maxBytes ${maxBytes}`).toBeGreaterThan(maxBytes);
    }
    expect(boundedIssues(issues, 1_000_000)).toMatchObject({ listed: issues, notListed: 0 });
  });
});

describe('RFC 9457: each kind of failure has its own type, title and status', () => {
  it('RFC 9457: the shared problem kinds keep their type, title and status', () => {
    expect([
      problems.notFound(),
      problems.methodNotAllowed(['GET']),
      problems.unauthorized('d'),
      problems.forbidden('d'),
      problems.badRequest('invalid-parameter', 'd'),
      problems.unsupportedMediaType('d'),
      problems.payloadTooLarge('d'),
      problems.internal(),
      problems.unavailable('d'),
    ]).toMatchObject([
      { type: problemTypeUri('not-found'), title: 'Not Found', status: 404 },
      { type: problemTypeUri('method-not-allowed'), title: 'Method Not Allowed', status: 405 },
      { type: problemTypeUri('unauthorized'), title: 'Unauthorized', status: 401 },
      { type: problemTypeUri('forbidden'), title: 'Forbidden', status: 403 },
      { type: problemTypeUri('invalid-parameter'), title: 'Invalid parameter', status: 400 },
      { type: problemTypeUri('unsupported-media-type'), title: 'Unsupported Media Type', status: 415 },
      { type: problemTypeUri('payload-too-large'), title: 'Payload Too Large', status: 413 },
      { type: problemTypeUri('internal'), title: 'Internal Server Error', status: 500 },
      { type: problemTypeUri('unavailable'), title: 'Service Unavailable', status: 503 },
    ]);
  });
});
