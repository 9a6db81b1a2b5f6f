/**
 * The bodies of the pull routes (docs/PULL.md), checked member by member: a receive's wait, lock
 * and count, a settle's lock tokens and its action's own member. Unknown members are refused, as
 * in the subscriptions API, so a typo never silently takes a default.
 */
import { problems, type Problem, type ValidationIssue } from '../http/problems.js';

export const RECEIVE_LIMITS = {
  maxevents: { min: 1, max: 100, default: 10 },
  waitseconds: { min: 0, max: 20, default: 20 },
  lockseconds: { min: 10, max: 43_200, default: 60 },
} as const;

export const SETTLE_LIMITS = {
  locktokens: { min: 1, max: 100 },
  delayseconds: { min: 0, max: 43_200, default: 0 },
  lockseconds: RECEIVE_LIMITS.lockseconds,
  reason: { maxLength: 1024 },
} as const;

export type SettleAction = 'acknowledge' | 'release' | 'renew-lock' | 'reject';

export interface ReceiveRequest {
  readonly maxEvents: number;
  readonly waitSeconds: number;
  readonly lockSeconds: number;
}

export interface SettleRequest {
  readonly lockTokens: readonly string[];
  /** release */
  readonly delaySeconds: number;
  /** renew-lock */
  readonly lockSeconds: number;
  /** reject */
  readonly reason: string;
}

type Parsed<T> = { readonly value: T } | { readonly problem: Problem };

export function parseReceiveRequest(body: Buffer): Parsed<ReceiveRequest> {
  const fields = jsonObject(body, true);
  if ('problem' in fields) return fields;
  const issues: ValidationIssue[] = unknownMembers(fields.value, Object.keys(RECEIVE_LIMITS));
  const integer = (name: keyof typeof RECEIVE_LIMITS) => integerMember(fields.value, name, RECEIVE_LIMITS[name], issues);
  const value = { maxEvents: integer('maxevents'), waitSeconds: integer('waitseconds'), lockSeconds: integer('lockseconds') };
  return issues.length > 0 ? invalid(issues) : { value };
}

export function parseSettleRequest(body: Buffer, action: SettleAction): Parsed<SettleRequest> {
  const fields = jsonObject(body, false);
  if ('problem' in fields) return fields;
  const own: readonly string[] = { acknowledge: [], release: ['delayseconds'], 'renew-lock': ['lockseconds'], reject: ['reason'] }[action];
  const issues = unknownMembers(fields.value, ['locktokens', ...own]);
  const tokens = fields.value['locktokens'];
  const { min, max } = SETTLE_LIMITS.locktokens;
  if (!Array.isArray(tokens) || tokens.length < min || tokens.length > max || !tokens.every((token) => typeof token === 'string' && token.length > 0)) {
    issues.push(issue('locktokens', 'array-of-strings', `locktokens must be a list of ${min} to ${max} lock tokens`));
  }
  const delaySeconds = own.includes('delayseconds') ? integerMember(fields.value, 'delayseconds', SETTLE_LIMITS.delayseconds, issues) : 0;
  const lockSeconds = own.includes('lockseconds') ? integerMember(fields.value, 'lockseconds', SETTLE_LIMITS.lockseconds, issues) : 0;
  const reasonValue = fields.value['reason'] ?? '';
  if (typeof reasonValue !== 'string' || reasonValue.length > SETTLE_LIMITS.reason.maxLength) {
    issues.push(issue('reason', 'string', `reason must be a string of at most ${SETTLE_LIMITS.reason.maxLength} characters`));
  }
  if (issues.length > 0) return invalid(issues);
  return { value: { lockTokens: tokens as string[], delaySeconds, lockSeconds, reason: reasonValue as string } };
}

function jsonObject(body: Buffer, emptyIsObject: boolean): Parsed<Record<string, unknown>> {
  const text = body.toString('utf8').trim();
  if (text === '' && emptyIsObject) return { value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: problems.badRequest('invalid-json', 'Invalid JSON', 'The body must be a JSON object.') };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problem: problems.badRequest('invalid-json', 'Invalid JSON', 'The body must be a JSON object.') };
  }
  return { value: value as Record<string, unknown> };
}

function unknownMembers(fields: Record<string, unknown>, known: readonly string[]): ValidationIssue[] {
  return Object.keys(fields)
    .filter((name) => !known.includes(name))
    .map((name) => issue(name, 'unknown-member', `unknown member "${name}"; members: ${known.join(', ')}`));
}

function integerMember(
  fields: Record<string, unknown>,
  name: string,
  limits: { readonly min: number; readonly max: number; readonly default: number },
  issues: ValidationIssue[],
): number {
  const value = fields[name];
  if (value === undefined) return limits.default;
  if (Number.isInteger(value) && (value as number) >= limits.min && (value as number) <= limits.max) return value as number;
  issues.push(issue(name, 'range', `${name} must be an integer from ${limits.min} to ${limits.max}`));
  return limits.default;
}

function issue(attribute: string, rule: string, message: string): ValidationIssue {
  return { attribute, rule, requirement: 'EDU-17', message };
}

function invalid(issues: readonly ValidationIssue[]): { problem: Problem } {
  return { problem: problems.badRequest('invalid-pull-request', 'Invalid Pull Request', 'The request does not follow docs/PULL.md.', issues) };
}
