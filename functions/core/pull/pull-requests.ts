/**
 * The bodies of the pull routes (docs/PULL.md), checked member by member: a receive's wait, lock
 * and count, a settle's lock tokens and its action's own member. Unknown members are refused, as
 * in the subscriptions API, so a typo never silently takes a default.
 */
import { KoerierError, problems, type ValidationIssue } from '../http/problems.js';

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

/** Throws the 400 (a `KoerierError`) naming every wrong member. */
export function parseReceiveRequest(body: Buffer): ReceiveRequest {
  const fields = jsonObject(body, true);
  const issues: ValidationIssue[] = unknownMembers(fields, Object.keys(RECEIVE_LIMITS));
  const integer = (name: keyof typeof RECEIVE_LIMITS) => integerMember(fields, name, RECEIVE_LIMITS[name], issues);
  const value = {
    maxEvents: integer('maxevents'),
    waitSeconds: integer('waitseconds'),
    lockSeconds: integer('lockseconds'),
  };
  if (issues.length > 0) throw invalid(issues);
  return value;
}

/** Throws the 400 (a `KoerierError`) naming every wrong member. */
export function parseSettleRequest(body: Buffer, action: SettleAction): SettleRequest {
  const fields = jsonObject(body, false);
  const own: readonly string[] = {
    acknowledge: [],
    release: ['delayseconds'],
    'renew-lock': ['lockseconds'],
    reject: ['reason'],
  }[action];
  const issues = unknownMembers(fields, ['locktokens', ...own]);
  const tokens = fields['locktokens'];
  const { min, max } = SETTLE_LIMITS.locktokens;
  if (
    !Array.isArray(tokens) ||
    tokens.length < min ||
    tokens.length > max ||
    !tokens.every((token) => typeof token === 'string' && token.length > 0)
  ) {
    issues.push(issue('locktokens', 'array-of-strings', `locktokens must be a list of ${min} to ${max} lock tokens`));
  }
  const delaySeconds = own.includes('delayseconds')
    ? integerMember(fields, 'delayseconds', SETTLE_LIMITS.delayseconds, issues)
    : 0;
  const lockSeconds = own.includes('lockseconds')
    ? integerMember(fields, 'lockseconds', SETTLE_LIMITS.lockseconds, issues)
    : 0;
  const reasonValue = fields['reason'] ?? '';
  if (typeof reasonValue !== 'string' || reasonValue.length > SETTLE_LIMITS.reason.maxLength) {
    issues.push(
      issue('reason', 'string', `reason must be a string of at most ${SETTLE_LIMITS.reason.maxLength} characters`),
    );
  }
  if (issues.length > 0) throw invalid(issues);
  return { lockTokens: tokens as string[], delaySeconds, lockSeconds, reason: reasonValue as string };
}

function jsonObject(body: Buffer, emptyIsObject: boolean): Record<string, unknown> {
  const text = body.toString('utf8').trim();
  if (text === '' && emptyIsObject) return {};
  const notAnObject = () =>
    new KoerierError(problems.badRequest('invalid-json', 'Invalid JSON', 'The body must be a JSON object.'));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new KoerierError(notAnObject().problem, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notAnObject();
  return value as Record<string, unknown>;
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
  if (Number.isInteger(value) && (value as number) >= limits.min && (value as number) <= limits.max)
    return value as number;
  issues.push(issue(name, 'range', `${name} must be an integer from ${limits.min} to ${limits.max}`));
  return limits.default;
}

function issue(attribute: string, rule: string, message: string): ValidationIssue {
  return { attribute, rule, requirement: 'EDU-17', message };
}

function invalid(issues: readonly ValidationIssue[]): KoerierError {
  return new KoerierError(
    problems.badRequest(
      'invalid-pull-request',
      'Invalid Pull Request',
      'The request does not follow docs/PULL.md.',
      issues,
    ),
  );
}
