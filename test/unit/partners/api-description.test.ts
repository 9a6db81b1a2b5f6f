/**
 * The per-client quotas (issue 28, item 13) as /openapi.json states them: their bounds and defaults
 * are read from the code that enforces them, so a changed default or bound shows in the description
 * with no other edit.
 */
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { DEFAULT_QUOTAS, QUOTA_BOUNDS, QUOTA_NAMES } from '../../../functions/core/quotas/client-quotas.js';

const document: unknown = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });
const text = JSON.stringify(document);

/** The `properties` of every `quotas` member schema in the document (the partner's view and its PUT body). */
function quotaSchemas(): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        const properties = (value as { properties?: Record<string, unknown> } | null)?.properties;
        if (key === 'quotas' && properties) found.push(properties);
        visit(value);
      }
    }
  };
  visit(document);
  expect(found.length).toBeGreaterThan(0);
  return found;
}

describe('per-client quotas in the API description (issue 28, item 13)', () => {
  it('EDU-20: every quota of a partner is described with the bounds and the default the code enforces', () => {
    for (const properties of quotaSchemas()) {
      expect(Object.keys(properties).sort()).toEqual([...QUOTA_NAMES].sort());
      for (const name of QUOTA_NAMES) {
        expect(properties[name], name).toMatchObject({
          type: 'integer',
          minimum: QUOTA_BOUNDS[name].min,
          maximum: QUOTA_BOUNDS[name].max,
        });
        expect((properties[name] as { description: string }).description, name).toContain(
          `default ${DEFAULT_QUOTAS[name]}`,
        );
      }
    }
  });

  it('EDU-20: each refusal of a quota states that quota’s default', () => {
    expect(text).toContain(`default ${DEFAULT_QUOTAS.maxPullSubscriptions}, an operator`);
    expect(text).toContain(`default ${DEFAULT_QUOTAS.maxConcurrentReplays}, an operator`);
    expect(text).toContain(`default ${DEFAULT_QUOTAS.uploadBytesPerHour} (10 GiB), an operator`);
  });
});
