/**
 * The `type` the tests expect in a problem of kind `slug`: the one place that says what a problem
 * type looks like (docs/CONTRACTS.md, "Problem types"), so a test names the kind and not the URI.
 * Written out here rather than taken from functions/core/http/problems.ts, so that a change to the
 * URIs the API answers with is a change the tests notice.
 */
import type { ProblemSlug } from '../../functions/core/http/problem-types.js';

export const PROBLEM_TYPE_PREFIX = '/v1/problems/';

/** Any problem type, for a test that checks the shape of an answer rather than its kind. */
export const ANY_PROBLEM_TYPE = /^\/v1\/problems\/[a-z0-9-]+$/;

export function problemTypeUri(slug: ProblemSlug): string {
  return `${PROBLEM_TYPE_PREFIX}${slug}`;
}
