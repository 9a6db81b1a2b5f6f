/**
 * Egress you can allow-list (issue 12, item 4): `koerier:fixedEgressAddresses` puts the functions
 * that call partners in a VPC whose NAT gateways have Elastic IPs, and lists them in the stack
 * outputs; without it there is no VPC at all. cdk-nag's AwsSolutions rules pass both ways.
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { addComplianceChecks } from '../../lib/checks.js';
import { egressContextKey } from '../../lib/egress-config.js';
import { functions } from '../../functions/config/resources.js';
import { parseStackConfig, StackConfigError } from '../../lib/stack-config.js';
import { buildKoerier, newApp, referencedIds, synthContext, synthKoerier, type CfnResourceJson } from './synth.js';

const outboundFunctions = Object.entries(functions)
  .filter(([, spec]) => 'outbound' in spec && spec.outbound)
  .map(([name]) => name);

function lambdaFunctions(resources: Record<string, CfnResourceJson>): Map<string, CfnResourceJson> {
  const byName = new Map<string, CfnResourceJson>();
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const match = /^Koerier (\w+) \(/.exec(String(resource.Properties['Description']));
    if (match) byName.set(match[1]!, resource);
  }
  return byName;
}

const ofType = (resources: Record<string, CfnResourceJson>, type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type);

describe('fixed egress addresses (issue 12)', () => {
  it('issue 12: off by default: no VPC, no NAT gateway, no Elastic IP, every function outside a VPC, no EgressAddresses output', () => {
    const { resources, template } = synthKoerier();
    expect(ofType(resources, 'AWS::EC2::VPC')).toEqual([]);
    expect(ofType(resources, 'AWS::EC2::NatGateway')).toEqual([]);
    expect(ofType(resources, 'AWS::EC2::EIP')).toEqual([]);
    for (const [name, fn] of lambdaFunctions(resources)) expect(fn.Properties['VpcConfig'], name).toBeUndefined();
    expect(Object.keys(template.toJSON().Outputs ?? {})).not.toContain('EgressAddresses');
  });

  it.each([1, 2])(
    'issue 12: with %i address(es): the outbound functions (delivery, handshake, alert webhooks, ZGW callback checks) run in private subnets behind as many NAT gateways, each with its own Elastic IP in the outputs',
    (addresses) => {
      const { resources, template } = synthKoerier({ context: { [egressContextKey.fixedEgressAddresses]: addresses } });
      expect(outboundFunctions.sort()).toEqual(['alerts', 'delivery', 'subscriptions', 'zgw']);
      const eips = ofType(resources, 'AWS::EC2::EIP');
      const nats = ofType(resources, 'AWS::EC2::NatGateway');
      expect(eips).toHaveLength(addresses);
      expect(nats).toHaveLength(addresses);
      // Each NAT gateway leaves from one of the stack's Elastic IPs, and the addresses outlive the stack.
      const eipIds = eips.map(([id]) => id);
      expect(nats.flatMap(([, nat]) => referencedIds(nat.Properties['AllocationId'])).sort()).toEqual(
        [...eipIds].sort(),
      );
      for (const [, eip] of eips) expect(eip.DeletionPolicy).toBe('Retain');

      const output = template.toJSON().Outputs['EgressAddresses'] as { Value: unknown };
      expect(referencedIds(output.Value).sort()).toEqual([...eipIds].sort());
      expect(JSON.stringify(output.Value)).toContain('PublicIp');

      const privateSubnets = new Set(
        ofType(resources, 'AWS::EC2::Subnet')
          .filter(([, subnet]) => subnet.Properties['MapPublicIpOnLaunch'] === false)
          .map(([id]) => id),
      );
      expect(privateSubnets.size).toBe(addresses);
      for (const [name, fn] of lambdaFunctions(resources)) {
        if (outboundFunctions.includes(name)) {
          expect(referencedIds(fn.Properties['VpcConfig']?.SubnetIds).sort(), name).toEqual([...privateSubnets].sort());
        } else {
          // The ingest, the router and the rest call no partner: they stay outside the VPC.
          expect(fn.Properties['VpcConfig'], name).toBeUndefined();
        }
      }
      // DynamoDB and S3 through free gateway endpoints, not the NAT gateways.
      expect(
        ofType(resources, 'AWS::EC2::VPCEndpoint').map(([, e]) => JSON.stringify(e.Properties['ServiceName'])),
      ).toEqual([expect.stringContaining('dynamodb'), expect.stringContaining('s3')]);
    },
  );

  it.each([0, 1, 2])(
    'CARD-2: cdk-nag AwsSolutions reports no unacknowledged error or warning with koerier:fixedEgressAddresses %i',
    (addresses) => {
      const app = newApp({ [egressContextKey.fixedEgressAddresses]: addresses });
      synthKoerier({ app });
      const report = new AwsSolutionsChecks(app).validateScope(app);
      const findings = report.violations.map(
        (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
      );
      expect(findings).toEqual([]);
    },
  );

  it('CARD-2: with the option on, synthesis as `cdk synth` does it (checks registered, template validation on) succeeds', () => {
    const app = newApp({ [egressContextKey.fixedEgressAddresses]: 2 }, { builtinValidation: true });
    const stack = buildKoerier(app);
    addComplianceChecks(app);
    const template = app.synth().getStackByName(stack.stackName).template as { Outputs: Record<string, unknown> };
    expect(Object.keys(template.Outputs)).toContain('EgressAddresses');
  });

  it.each([
    [3, 'koerier:fixedEgressAddresses must be 0 (no fixed egress) or a number of addresses from 1 to 2, got 3'],
    [-1, 'koerier:fixedEgressAddresses must be 0 (no fixed egress) or a number of addresses from 1 to 2, got -1'],
    ['yes', 'koerier:fixedEgressAddresses must be 0 (no fixed egress) or a number of addresses from 1 to 2, got "yes"'],
    [1.5, 'koerier:fixedEgressAddresses must be 0 (no fixed egress) or a number of addresses from 1 to 2, got 1.5'],
  ])('issue 12: koerier:fixedEgressAddresses %j fails synth naming the key', (value, message) => {
    expect(() => parseStackConfig({ ...synthContext, [egressContextKey.fixedEgressAddresses]: value })).toThrow(
      StackConfigError,
    );
    expect(() => parseStackConfig({ ...synthContext, [egressContextKey.fixedEgressAddresses]: value })).toThrow(
      message,
    );
  });

  it('issue 12: koerier:fixedEgressAddresses from -c arrives as text and is read as a number', () => {
    expect(parseStackConfig({ ...synthContext, [egressContextKey.fixedEgressAddresses]: '2' }).egress).toEqual({
      fixedAddresses: 2,
    });
    expect(parseStackConfig(synthContext).egress).toEqual({ fixedAddresses: 0 });
  });
});
