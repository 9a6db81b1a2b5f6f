/**
 * issue 13, item 5: a list route refuses a query parameter it does not know instead of ignoring it,
 * so a misspelt filter never reads as "this is what matched".
 */
import { describe, expect, it } from 'vitest';
import type { KoerierError } from '../../../functions/core/http/problems.js';
import { refuseUnknownParameters } from '../../../functions/core/http/query-parameters.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { refusalOf } from '../../support/refusals.js';

const KNOWN = ['outcome', 'limit', 'cursor'];

/** The thrown refusal, for its problem and headers. */
const refusal = (query: Record<string, string>): KoerierError =>
  refusalOf(() => refuseUnknownParameters({ query }, KNOWN));

describe('issue 13, item 5: unknown query parameters', () => {
  it('issue 13, item 5: known parameters, or none, pass', () => {
    expect(() => refuseUnknownParameters({ query: {} }, KNOWN)).not.toThrow();
    expect(() => refuseUnknownParameters({ query: { outcome: 'dead-lettered', limit: '5' } }, KNOWN)).not.toThrow();
  });

  it('issue 13, item 5: a misspelt parameter is a 400 invalid-parameter that names it', () => {
    const error = refusal({ outcom: 'dead-lettered', limit: '5' });
    expect(error.problem).toMatchObject({
      type: problemTypeUri('invalid-parameter'),
      title: 'Invalid parameter',
      status: 400,
    });
    expect(error.problem.detail).toContain('outcom');
  });
});
