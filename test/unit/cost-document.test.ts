/**
 * docs/COST.md is generated (issue 15, item 5): its figures come from bench/results, never by
 * hand, so they cannot drift from the measurements. And the model's arithmetic, on a scenario
 * whose dollars can be worked out on paper.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { readResults } from '../../bench/cost/generate.js';
import { markedSection } from '../../lib/documents/marked-sections.js';
import {
  collectScenarios,
  dollarsPerMillion,
  eventBridgePerMillion,
  PRICES,
  renderCostDocument,
  totalOf,
} from '../../bench/cost/model.js';
import type { CostScenario, StageUsage } from '../../bench/support/aws-usage.js';

const stage = (usage: Partial<StageUsage> & Pick<StageUsage, 'invocations' | 'records' | 'handlerMs'>): StageUsage => ({
  requests: {},
  items: {},
  units: {
    sqs64KiBChunks: 0,
    dynamodbReadUnits: 0,
    dynamodbWriteUnits: 0,
    s3PutClass: 0,
    s3GetClass: 0,
    s3BytesWritten: 0,
  },
  ...usage,
});

describe('the cost model (issue 15, item 5)', () => {
  // The idle month is made from the synthesized template (test/infra/generated-documents.test.ts checks it).
  it('issue 15 #5: docs/COST.md is exactly what the generator makes of the committed bench/results', async () => {
    const document = await readFile(new URL('../../docs/COST.md', import.meta.url), 'utf8');
    const expected = renderCostDocument(await readResults(), markedSection(document, 'idle-month'));
    expect(document).toBe(expected);
  });

  it('issue 15 #5: the document states the region and the date of its prices, and names every scenario measured', async () => {
    const results = await readResults();
    const document = renderCostDocument(results, '');
    expect(document).toContain(`## Prices (${PRICES.region}, on-demand, read ${PRICES.date})`);
    for (const scenario of Object.values(collectScenarios(results)))
      expect(document).toContain(`| ${scenario.description} |`);
  });

  it('issue 15 #5: dollars per million follow from requests, units, invocations and handler time at the listed prices', () => {
    // One ingest invocation per event of 10 ms at 512 MB (an HTTP function: one API request),
    // 2 write units and one SQS chunk; one router invocation per 10 events of 20 ms.
    const scenario: CostScenario = {
      events: 10,
      description: 'worked example',
      dataBytes: 100,
      stages: {
        ingest: stage({
          invocations: 10,
          records: 10,
          handlerMs: 100,
          units: {
            ...stage({ invocations: 0, records: 0, handlerMs: 0 }).units,
            dynamodbWriteUnits: 20,
            sqs64KiBChunks: 10,
          },
        }),
        router: stage({
          invocations: 1,
          records: 10,
          handlerMs: 20,
          requests: { 'sqs:SendMessageBatch': 1 },
          items: { 'sqs:SendMessageBatch': 10 },
          units: { ...stage({ invocations: 0, records: 0, handlerMs: 0 }).units, sqs64KiBChunks: 1 },
        }),
      },
    };
    const dollars = dollarsPerMillion(scenario);
    expect(dollars.lambdaRequests).toBeCloseTo(1.1 * 0.2, 6);
    expect(dollars.lambdaDuration).toBeCloseTo(
      1e6 * (0.01 * 0.5 + 0.1 * 0.02 * 0.5) * PRICES.lambda.perGbSecondArm64,
      6,
    );
    expect(dollars.apiGateway).toBeCloseTo(PRICES.apiGatewayHttp.perMillionRequests, 6);
    // Ingest's own chunk, the router's batch, and the event source's receive and delete per router invocation.
    expect(dollars.sqs).toBeCloseTo((1 + 0.1 + 0.2) * 0.4, 6);
    expect(dollars.dynamodb).toBeCloseTo(2 * PRICES.dynamodbOnDemand.perMillionWriteUnits, 6);
    // Naive: the router's batch of 10 becomes 10 requests and 10 invocations (with their event-source requests).
    const naive = dollarsPerMillion(scenario, true);
    expect(naive.sqs).toBeCloseTo((1 + 1 + 2) * 0.4, 6);
    expect(naive.lambdaRequests).toBeCloseTo(2 * 0.2, 6);
    expect(totalOf(naive)).toBeGreaterThan(totalOf(dollars));
  });

  it('issue 15 #5: EventBridge API destinations: the API in front, PutEvents per 64 KB, one call per push target; nothing over 256 KB', () => {
    const small: CostScenario = { events: 1, description: '', dataBytes: 100, stages: {} };
    expect(eventBridgePerMillion(small, 3)).toBeCloseTo(1.11 + 1 + 3 * 0.2, 6);
    expect(eventBridgePerMillion({ ...small, dataBytes: 1024 * 1024 }, 1)).toBeUndefined();
  });

  it('issue 15 #5: EventBridge is given the API requests Koerier had: batches of 10 pay the API once per 10 events on both sides', () => {
    const batched: CostScenario = {
      events: 10,
      description: '',
      dataBytes: 100,
      stages: { ingest: stage({ invocations: 1, records: 1, handlerMs: 5 }) },
    };
    expect(eventBridgePerMillion(batched, 1)).toBeCloseTo(0.1 * 1.11 + 1 + 0.2, 6);
  });
});
