/** Builders and assertions shared by the CloudEvents unit tests. */
import { expect } from 'vitest';
import { KoerierError, type Problem, type ValidationIssue } from '../../../functions/core/http/problems.js';
import {
  parseCloudEventsRequest,
  type AcceptedEvent,
  type ParsedEvents,
} from '../../../functions/core/cloudevents/index.js';
import { problemTypeUri } from '../../support/problem-types.js';

export const OPTIONS = { maxEventBytes: 64 * 1024 };

/** A valid event in the style of the NL GOV profile examples; `overrides` may set null or add. */
export function nlEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    specversion: '1.0',
    type: 'nl.overheid.zaken.zaakstatus-gewijzigd',
    source: 'urn:nld:oin:00000001823288444000:systeem:BRP-component',
    id: 'f3dce042-cd6e-4977-844d-05be8dce7cea',
    ...overrides,
  };
}

export interface TestRequest {
  headers: Record<string, string>;
  body: Buffer;
}

export function structuredRequest(
  event: unknown,
  contentType = 'application/cloudevents+json',
  headers: Record<string, string> = {},
): TestRequest {
  const text = typeof event === 'string' ? event : JSON.stringify(event);
  return { headers: { 'content-type': contentType, ...headers }, body: Buffer.from(text, 'utf8') };
}

export function batchRequest(events: unknown, contentType = 'application/cloudevents-batch+json'): TestRequest {
  return structuredRequest(events, contentType);
}

export function binaryRequest(headers: Record<string, string>, body: string | Buffer = ''): TestRequest {
  return { headers, body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body };
}

/** What a request parses to, for assertions: its events, or the problem of the KoerierError it was refused with. */
export type ParseOutcome = ({ ok: true } & ParsedEvents) | { ok: false; problem: Problem };

export function parse(request: TestRequest, options = OPTIONS): ParseOutcome {
  try {
    return { ok: true, ...parseCloudEventsRequest(request, options) };
  } catch (error) {
    if (error instanceof KoerierError) return { ok: false, problem: error.problem };
    throw error;
  }
}

export function acceptedEvents(outcome: ParseOutcome): AcceptedEvent[] {
  if (!outcome.ok) expect.fail(`expected acceptance, got ${JSON.stringify(outcome.problem)}`);
  return outcome.events;
}

export function acceptedEvent(outcome: ParseOutcome): AcceptedEvent {
  const events = acceptedEvents(outcome);
  expect(events).toHaveLength(1);
  return events[0]!;
}

export function problemOf(outcome: ParseOutcome): Problem {
  if (outcome.ok) expect.fail(`expected a problem, got ${outcome.events.length} accepted event(s)`);
  return outcome.problem;
}

/** `requirement rule attribute [#index]` for each issue, compact enough to compare whole lists. */
export function summary(issues: readonly ValidationIssue[] | undefined): string[] {
  return (issues ?? []).map(
    (i) => `${i.requirement} ${i.rule} ${i.attribute ?? '-'}${i.index === undefined ? '' : ` #${i.index}`}`,
  );
}

export function invalidIssues(outcome: ParseOutcome): string[] {
  const problem = problemOf(outcome);
  expect(problem.status).toBe(400);
  expect(problem.type).toBe(problemTypeUri('invalid-cloudevent'));
  expect(problem.title).toBe('Invalid CloudEvent');
  return summary(problem.errors);
}
