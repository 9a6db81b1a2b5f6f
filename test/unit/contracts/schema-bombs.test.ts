/**
 * The parts of issue 28, item 6 below the HTTP layer: the expanded size measured without expanding,
 * the payload cap at publish, the ingest's remembered refusal of a schema stored before the caps
 * (compiled once, not once per event), and the compatibility check's patterns run by RE2.
 */
import { describe, expect, it } from 'vitest';
import { DataContracts } from '../../../functions/core/contracts/data-contracts.js';
import { expandedSize, PAYLOAD_CAP } from '../../../functions/core/contracts/expanded-size.js';
import { payloadFindings } from '../../../functions/core/contracts/payload-checks.js';
import { compareSchemas } from '../../../functions/core/contracts/schema-compatibility.js';
import { silentLog } from '../../../functions/core/ports/log.js';

/** A schema whose levels share one object twice each: `levels` objects in memory, 2^levels nodes as JSON. */
function sharedBomb(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema, b: schema } };
  return schema;
}

describe('issue 28, item 6: schema bombs below the HTTP layer', () => {
  it('SEC-28.6, EDU-21: the expanded size of 2^60 nodes is measured at once, without expanding, $refs and shared objects alike', () => {
    const started = Date.now();
    expect(expandedSize(sharedBomb(60)).nodes).toBeGreaterThan(2 ** 60);
    const schemas: Record<string, unknown> = { s0: { type: 'string' } };
    for (let i = 1; i <= 60; i++)
      schemas[`s${i}`] = { properties: { a: { $ref: `#/s${i - 1}` }, b: { $ref: `#/s${i - 1}` } } };
    expect(expandedSize({ root: { $ref: '#/s60' }, ...schemas }).nodes).toBeGreaterThan(2 ** 60);
    expect(Date.now() - started).toBeLessThan(500);
    // A recursive schema counts its reference to itself once.
    expect(expandedSize({ tree: { properties: { child: { $ref: '#/tree' } } } }).nodes).toBe(5);
  });

  it('SEC-28.6, EDU-21: a payload schema past the payload cap is refused at publish with its rule, naming the cap and the message', () => {
    expect(payloadFindings([{ id: 'small', payload: sharedBomb(10) }])).toEqual([]);
    expect(payloadFindings([{ id: 'enrolled', payload: sharedBomb(20) }])).toEqual([
      expect.objectContaining({
        rule: 'payload-expansion-cap',
        message: expect.stringMatching(
          /^the payload schema of message "enrolled" grows to \d+ nodes.*cap is 20000 nodes/,
        ),
      }),
    ]);
    expect(PAYLOAD_CAP.nodes).toBe(20_000);
  });

  it('SEC-28.6, EDU-21: a schema stored before the caps is refused by the ingest with a finding, read and measured once, never compiled per event', async () => {
    const binding = {
      type: 'nl.edu.big.v1',
      contract: 'big',
      version: '1.0.0',
      message: 'm',
      mode: 'enforce' as const,
      updatedAt: '',
      updatedBy: '',
    };
    let reads = 0;
    const contracts = new DataContracts({
      store: { listBindings: async () => [binding] },
      documents: {
        getSchemas: async () => {
          reads++;
          return { m: JSON.parse(JSON.stringify(sharedBomb(16))) as Record<string, unknown> };
        },
      },
      refreshMs: 60_000,
      clock: () => 0,
      log: silentLog,
    });
    const event = { type: binding.type, json: JSON.stringify({ type: binding.type, data: { a: 'x' } }) };
    for (let i = 0; i < 3; i++) {
      const outcome = await contracts.check([event] as never, false, 'anyone');
      expect(outcome.violations).toEqual([
        expect.objectContaining({
          rule: 'contract-too-large',
          pointer: '/data',
          message: expect.stringContaining('cap is 20000 nodes'),
        }),
      ]);
    }
    expect(reads).toBe(1);
  });

  it('SEC-28.6, EDU-21: the compatibility check matches enum members against a pattern with RE2: a catastrophic pattern costs no time', () => {
    const started = Date.now();
    const previous = { type: 'string', pattern: '^(a+)+$' };
    const next = { type: 'string', enum: [`${'a'.repeat(40)}!`] };
    // No member of the new enum matches the old pattern, and RE2 says so at once.
    expect(compareSchemas(previous, next).verdict).toBe('breaking');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
