/**
 * Egress you can allow-list (issue 12, item 4), read from the CDK context with the rest of
 * lib/stack-config.ts:
 *
 *   koerier:fixedEgressAddresses   0 (default): the outbound functions run outside a VPC, and their
 *                                  requests leave from AWS's shared Lambda addresses, which no
 *                                  partner can allow-list. 1 or 2: the functions that call partners
 *                                  (functions/config/resources.ts `outbound`: deliveries, token fetches, the
 *                                  validation handshake) run in a VPC whose private subnets leave
 *                                  through that many NAT gateways, each with its own Elastic IP;
 *                                  the addresses are the stack output `EgressAddresses`. 2 spreads
 *                                  them over two availability zones, so one zone failing does not
 *                                  stop deliveries. Cost: docs/OPERATIONS.md "Fixed egress addresses".
 */

export interface EgressConfig {
  /** NAT gateways, each with an Elastic IP, one per availability zone; 0: no VPC. */
  readonly fixedAddresses: number;
}

export const egressContextKey = {
  fixedEgressAddresses: 'koerier:fixedEgressAddresses',
} as const;

/** At most two: without an account and region at synth, CDK knows two availability zones. */
export const MAX_FIXED_EGRESS_ADDRESSES = 2;

/** Reads the egress settings; each problem goes into `issues`, naming its key. */
export function parseEgressConfig(context: Readonly<Record<string, unknown>>, issues: string[]): EgressConfig {
  const raw = context[egressContextKey.fixedEgressAddresses];
  if (raw === undefined) return { fixedAddresses: 0 };
  const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_FIXED_EGRESS_ADDRESSES) {
    issues.push(
      `${egressContextKey.fixedEgressAddresses} must be 0 (no fixed egress) or a number of addresses from 1 to ${MAX_FIXED_EGRESS_ADDRESSES}, got ${JSON.stringify(raw)}`,
    );
    return { fixedAddresses: 0 };
  }
  return { fixedAddresses: value };
}
