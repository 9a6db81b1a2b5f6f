/**
 * The filter dialects every CloudEvents Subscriptions API implementation must support (section
 * 3.2.4.1.1): `exact`, `prefix` and `suffix` over attribute → value maps, `all` and `any` over
 * filter lists, `not` over one filter. Comparisons are case sensitive; an attribute the event does
 * not carry never matches. Also the optional `sql` dialect (3.2.4.1.2): a CESQL v1 expression
 * (sql-filter.ts, issue 32). Anything else is rejected.
 */
import type { ValidationIssue } from '../http/problems.js';
import { sqlFilterMatches, sqlFilterProblem } from './sql-filter.js';

export type AttributeMatch = Readonly<Record<string, string>>;

export type Filter =
  | { readonly exact: AttributeMatch }
  | { readonly prefix: AttributeMatch }
  | { readonly suffix: AttributeMatch }
  | { readonly all: readonly Filter[] }
  | { readonly any: readonly Filter[] }
  | { readonly not: Filter }
  /** A CESQL v1 expression, kept as written. */
  | { readonly sql: string };

export const FILTER_DIALECTS = ['exact', 'prefix', 'suffix', 'all', 'any', 'not', 'sql'] as const;

/** An event's context attributes as the filters see them (CloudEvents type system values). */
export type EventAttributes = Readonly<Record<string, string | number | boolean>>;

/** Bounds that keep one subscription's evaluation cheap for the router. */
export const FILTER_LIMITS = { maxDepth: 8, maxNodes: 64, maxValueLength: 1024 } as const;

/** An attribute name a filter may compare (CE-1); the Filter schema states the same pattern. */
export const ATTRIBUTE_NAME_PATTERN = '^[a-z0-9]{1,64}$';
const ATTRIBUTE_NAME = new RegExp(ATTRIBUTE_NAME_PATTERN);

/**
 * The canonical string of an attribute value (CloudEvents type system): booleans `true`/`false`,
 * integers in decimal. Filters compare against this.
 */
export function attributeString(value: string | number | boolean | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : String(value);
}

export function filterMatches(filter: Filter, attributes: EventAttributes): boolean {
  if ('exact' in filter) return everyAttribute(filter.exact, attributes, (actual, wanted) => actual === wanted);
  if ('prefix' in filter)
    return everyAttribute(filter.prefix, attributes, (actual, wanted) => actual.startsWith(wanted));
  if ('suffix' in filter) return everyAttribute(filter.suffix, attributes, (actual, wanted) => actual.endsWith(wanted));
  if ('all' in filter) return filter.all.every((child) => filterMatches(child, attributes));
  if ('any' in filter) return filter.any.some((child) => filterMatches(child, attributes));
  if ('sql' in filter) return sqlFilterMatches(filter.sql, attributes);
  return !filterMatches(filter.not, attributes);
}

function everyAttribute(
  match: AttributeMatch,
  attributes: EventAttributes,
  compare: (actual: string, wanted: string) => boolean,
): boolean {
  for (const [name, wanted] of Object.entries(match)) {
    // Own attributes only: `constructor` or `toString` must not find Object.prototype's members.
    const actual = Object.hasOwn(attributes, name) ? attributeString(attributes[name]) : undefined;
    if (actual === undefined || !compare(actual, wanted)) return false;
  }
  return true;
}

/**
 * Checks untrusted JSON against the dialects. Returns the filters as typed values, or every issue
 * found, each naming its place (`filters[0].all[1].exact.type`).
 */
export function parseFilters(value: unknown, path = 'filters'): { filters: Filter[]; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  if (!Array.isArray(value)) {
    issues.push(issue(path, 'array', 'filters must be an array of filter expressions'));
    return { filters: [], issues };
  }
  const budget = { nodes: 0 };
  const filters = value.map((item, index) => parseFilter(item, `${path}[${index}]`, 1, budget, issues));
  if (budget.nodes > FILTER_LIMITS.maxNodes) {
    issues.push(issue(path, 'too-complex', `at most ${FILTER_LIMITS.maxNodes} filter expressions per subscription`));
  }
  return { filters: filters.filter((f): f is Filter => f !== undefined), issues };
}

function parseFilter(
  value: unknown,
  path: string,
  depth: number,
  budget: { nodes: number },
  issues: ValidationIssue[],
): Filter | undefined {
  budget.nodes++;
  if (depth > FILTER_LIMITS.maxDepth) {
    issues.push(issue(path, 'too-deep', `filters nest at most ${FILTER_LIMITS.maxDepth} levels`));
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push(
      issue(path, 'filter-expression', 'a filter expression is an object with one dialect name as its only member'),
    );
    return undefined;
  }
  const members = Object.keys(value);
  if (members.length !== 1) {
    issues.push(
      issue(path, 'filter-expression', `a filter expression has exactly one dialect member, found ${members.length}`),
    );
    return undefined;
  }
  const dialect = members[0]!;
  const body = (value as Record<string, unknown>)[dialect];
  const at = `${path}.${dialect}`;
  switch (dialect) {
    case 'exact':
    case 'prefix':
    case 'suffix': {
      const match = parseAttributeMatch(body, at, issues);
      return match && ({ [dialect]: match } as unknown as Filter);
    }
    case 'all':
    case 'any': {
      if (!Array.isArray(body) || body.length === 0) {
        issues.push(issue(at, 'non-empty-array', `"${dialect}" needs a non-empty array of filter expressions`));
        return undefined;
      }
      const children = body.map((child, index) => parseFilter(child, `${at}[${index}]`, depth + 1, budget, issues));
      if (children.some((child) => child === undefined)) return undefined;
      return dialect === 'all' ? { all: children as Filter[] } : { any: children as Filter[] };
    }
    case 'not': {
      const child = parseFilter(body, at, depth + 1, budget, issues);
      return child && { not: child };
    }
    case 'sql': {
      if (typeof body !== 'string' || body.trim() === '') {
        issues.push(issue(at, 'non-empty-string', '"sql" holds a CESQL v1 expression as a non-empty string'));
        return undefined;
      }
      const problem = sqlFilterProblem(body);
      if (problem === undefined) return { sql: body };
      issues.push(issue(at, 'cesql', `"sql" is not a CESQL v1 expression ${problem}`));
      return undefined;
    }
    default:
      issues.push(
        issue(
          path,
          'unsupported-dialect',
          `unsupported filter dialect "${dialect}"; supported: ${FILTER_DIALECTS.join(', ')}`,
        ),
      );
      return undefined;
  }
}

function parseAttributeMatch(value: unknown, path: string, issues: ValidationIssue[]): AttributeMatch | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0) {
    issues.push(issue(path, 'non-empty-object', 'needs an object of at least one attribute name → value'));
    return undefined;
  }
  const match: Record<string, string> = {};
  let valid = true;
  for (const [name, wanted] of Object.entries(value)) {
    if (!ATTRIBUTE_NAME.test(name)) {
      issues.push(issue(`${path}.${name}`, 'attribute-name', 'attribute names are 1-64 characters a-z and 0-9 (CE-1)'));
      valid = false;
    } else if (typeof wanted !== 'string' || wanted.length === 0) {
      issues.push(issue(`${path}.${name}`, 'non-empty-string', 'the value to compare with must be a non-empty string'));
      valid = false;
    } else if (wanted.length > FILTER_LIMITS.maxValueLength) {
      issues.push(
        issue(`${path}.${name}`, 'too-long', `values are at most ${FILTER_LIMITS.maxValueLength} characters`),
      );
      valid = false;
    } else {
      match[name] = wanted;
    }
  }
  return valid ? match : undefined;
}

function issue(attribute: string, rule: string, message: string): ValidationIssue {
  return { attribute, rule, requirement: 'EDU-14', message };
}
