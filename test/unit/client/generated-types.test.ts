/**
 * Issue 29 item 5: the committed client types are what the generator writes from the API
 * description today, so a change to the description that is not regenerated fails here.
 */
import { describe, expect, it } from 'vitest';
import { committedTypes, generatedTypes, GENERATED_TYPES_FILE } from '../../../client/generate-types.js';

describe('the generated API client types (issue 29 item 5)', () => {
  it(
    'issue 29 item 5: client/koerier-api.d.ts is what `npm run api:types` generates from the API description (regenerate it when this fails)',
    { timeout: 60_000 },
    async () => {
      const committed = await committedTypes();
      expect(committed, `${GENERATED_TYPES_FILE} is missing`).not.toBe('');
      // Compared as strings, not by toBe's diff of 7,000 lines: the message says what to do.
      const fresh = await generatedTypes();
      expect(committed === fresh, 'client/koerier-api.d.ts is stale: run `npm run api:types` and commit it').toBe(true);
    },
  );

  it('issue 29 item 5: the generated types name the component schemas the clients use', async () => {
    const committed = await committedTypes();
    for (const name of [
      'CloudEvent',
      'Problem',
      'ValidationIssue',
      'SubscriptionRequest',
      'Subscription',
      'DeliveryAttempt',
    ])
      expect(committed).toContain(`    ${name}: {`);
  });
});
