/**
 * The replay API's request body, its view of a replay and its refusals
 * (functions/core/replay/replay-requests.ts), without the service around them: which bodies are
 * refused with which machine-readable issue, what a replay asks for once parsed, and what a
 * subscriber reads back.
 */
import { describe, expect, it } from 'vitest';
import { KoerierError } from '../../../functions/core/http/problems.js';
import {
  beyondEntitlement,
  notActive,
  notRunning,
  parseReplayRequest,
  replayRunning,
  replayView,
} from '../../../functions/core/replay/replay-requests.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { HOUR, NOW, runningReplay } from './replay-fakes.js';

const FROM = '2026-11-23T10:00:00Z';
const TO = '2026-11-23T11:00:00Z';

const raw = (text: string) => Buffer.from(text);
const body = (value: unknown) => raw(JSON.stringify(value));

/** The refusal a body gets: the problem a client reads, with its issues as attribute/rule/requirement. */
function refusal(buffer: Buffer) {
  try {
    parseReplayRequest(buffer);
  } catch (error) {
    expect(error).toBeInstanceOf(KoerierError);
    const { problem } = error as KoerierError;
    const issues = (problem['errors'] ?? []).map(({ attribute, rule, requirement }) => ({
      attribute,
      rule,
      requirement,
    }));
    return { type: problem.type, title: problem.title, status: problem.status, issues };
  }
  throw new Error('the body was accepted');
}

describe('replay request body (issue 13, item 2)', () => {
  // Issue 29 item 2: was an invalid-replay-request with a `json` issue; every route now answers malformed JSON alike.
  it('EDU-18, issue 29 item 2: a body that is not JSON is the 400 malformed-json every route answers', () => {
    expect(refusal(raw('{"from":'))).toEqual({
      type: problemTypeUri('malformed-json'),
      title: 'Malformed JSON',
      status: 400,
      issues: [],
    });
  });

  it('EDU-18: a refused body is a 400 invalid-replay-request with the catalogue title', () => {
    expect(refusal(body({ from: FROM }))).toMatchObject({
      type: problemTypeUri('invalid-replay-request'),
      title: 'Invalid replay request',
      status: 400,
    });
  });

  it('EDU-18: JSON that is not an object (null, a list, a string, a number) is refused as such, not read member by member', () => {
    for (const text of ['null', '[]', '"from"', '5']) {
      expect(refusal(raw(text)).issues, text).toEqual([
        { attribute: undefined, rule: 'object', requirement: 'EDU-18' },
      ]);
    }
  });

  it('EDU-18: every unknown member is named with its own issue', () => {
    expect(refusal(body({ from: FROM, to: TO, extra: 1, also: true })).issues).toEqual([
      { attribute: 'extra', rule: 'unknown-member', requirement: 'EDU-18' },
      { attribute: 'also', rule: 'unknown-member', requirement: 'EDU-18' },
    ]);
  });

  it('EDU-18: from and to are RFC 3339 date-times only: a date alone, a number or a list holding a date-time is refused, each named', () => {
    expect(refusal(body({ from: '2026-11-23', to: TO })).issues).toEqual([
      { attribute: 'from', rule: 'date-time', requirement: 'EDU-18' },
    ]);
    expect(refusal(body({ from: FROM, to: Date.parse(TO) })).issues).toEqual([
      { attribute: 'to', rule: 'string', requirement: 'EDU-18' },
    ]);
    // A list of one string reads as that string to Date.parse and to a regular expression: only the type check stops it.
    expect(refusal(body({ from: [FROM], to: TO })).issues).toEqual([
      { attribute: 'from', rule: 'string', requirement: 'EDU-18' },
    ]);
    expect(parseReplayRequest(body({ from: '2026-11-23T10:00:00.5+01:00', to: TO }))).toEqual({
      from: Date.parse('2026-11-23T09:00:00.500Z'),
      to: Date.parse(TO),
    });
  });

  it('EDU-18: the window is half-open, so "to" must be later than "from": an empty window is refused as a window issue on "to"', () => {
    expect(refusal(body({ from: FROM, to: FROM })).issues).toEqual([
      { attribute: 'to', rule: 'window', requirement: 'EDU-18' },
    ]);
    expect(refusal(body({ from: TO, to: FROM })).issues).toEqual([
      { attribute: 'to', rule: 'window', requirement: 'EDU-18' },
    ]);
  });

  it('EDU-18: types is a list of 1 to 100 non-empty strings; 101, an empty string or a non-string among them is refused', () => {
    const types = Array.from({ length: 100 }, (_, i) => `nl.example.t${i}.v1`);
    expect(parseReplayRequest(body({ from: FROM, to: TO, types })).types).toEqual(types);
    // Issue 29 item 2: a wrong entry is named by its place in the list.
    const issue = (attribute: string, rule: string) => [{ attribute, rule, requirement: 'EDU-18' }];
    expect(refusal(body({ from: FROM, to: TO, types: [...types, 'nl.example.extra.v1'] })).issues).toEqual(
      issue('types', 'items'),
    );
    expect(refusal(body({ from: FROM, to: TO, types: ['nl.example.a.v1', ''] })).issues).toEqual(
      issue('types[1]', 'length'),
    );
    expect(refusal(body({ from: FROM, to: TO, types: [''] })).issues).toEqual(issue('types[0]', 'length'));
    expect(refusal(body({ from: FROM, to: TO, types: ['nl.example.a.v1', 1] })).issues).toEqual(
      issue('types[1]', 'string'),
    );
    expect(refusal(body({ from: FROM, to: TO, types: [1] })).issues).toEqual(issue('types[0]', 'string'));
  });

  it('EDU-18: filters narrow the replay as given; an empty list narrows nothing and is left out', () => {
    const filters = [{ exact: { source: 'urn:a' } }];
    expect(parseReplayRequest(body({ from: FROM, to: TO, filters }))).toStrictEqual({
      from: Date.parse(FROM),
      to: Date.parse(TO),
      filters,
    });
    expect(parseReplayRequest(body({ from: FROM, to: TO, filters: [] }))).toStrictEqual({
      from: Date.parse(FROM),
      to: Date.parse(TO),
    });
    expect(parseReplayRequest(body({ from: FROM, to: TO }))).toStrictEqual({
      from: Date.parse(FROM),
      to: Date.parse(TO),
    });
    expect(refusal(body({ from: FROM, to: TO, filters: {} })).issues).toEqual([
      { attribute: 'filters', rule: 'array', requirement: expect.any(String) },
    ]);
  });
});

describe('replay view (issue 13, item 2)', () => {
  it('EDU-18: a running replay shows no narrowing, end or reason it does not have', () => {
    const view = replayView(runningReplay());
    for (const member of ['types', 'filters', 'finishedAt', 'reason']) expect(view, member).not.toHaveProperty(member);
  });

  it('EDU-18: a finished replay shows its narrowing, when it ended and why it failed', () => {
    const filters = [{ exact: { source: 'urn:a' } }];
    const view = replayView(
      runningReplay({
        state: 'failed',
        types: ['nl.example.a.v1'],
        filters,
        finishedAt: NOW + HOUR,
        reason: 'the subscription was deleted',
      }),
    );
    expect(view).toMatchObject({
      state: 'failed',
      types: ['nl.example.a.v1'],
      filters,
      finishedAt: new Date(NOW + HOUR).toISOString(),
      reason: 'the subscription was deleted',
    });
  });
});

describe('replay refusals (issue 13, item 2)', () => {
  it('EDU-18: the 409s name their kind and title; a running replay is pointed at only when it is known', () => {
    expect(notActive('sub-1', 'suspended').problem).toMatchObject({
      status: 409,
      type: problemTypeUri('subscription-not-active'),
      title: 'Subscription not active',
    });
    expect(notRunning('replay-1', 'completed').problem).toMatchObject({
      status: 409,
      type: problemTypeUri('replay-not-running'),
      title: 'Replay not running',
    });
    const running = replayRunning('sub-1', 'replay-1');
    expect(running.problem).toMatchObject({
      status: 409,
      type: problemTypeUri('replay-running'),
      title: 'Replay running',
    });
    expect(running.headers).toEqual({ location: '/v1/subscriptions/sub-1/replays/replay-1' });
    expect(replayRunning('sub-1', undefined).headers).toEqual({});
  });

  it('EDU-7: a narrowing beyond the entitlement or the subscription is a 403 of its own kind, titled Replay Beyond Entitlement', () => {
    expect(beyondEntitlement('nl.example.secret.v1', 'not-entitled').problem).toMatchObject({
      status: 403,
      type: problemTypeUri('replay-not-entitled'),
      title: 'Replay beyond entitlement',
    });
    expect(beyondEntitlement('nl.example.b.v1', 'not-subscribed').problem).toMatchObject({
      status: 403,
      type: problemTypeUri('replay-beyond-subscription'),
      title: 'Replay beyond the subscription',
    });
  });
});
