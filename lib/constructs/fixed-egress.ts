/**
 * Fixed egress addresses (issue 12, item 4; lib/egress-config.ts): a VPC whose private subnets
 * reach the internet only through NAT gateways with Elastic IPs of their own, so a partner can
 * allow-list the addresses Koerier's deliveries, token requests and validation handshakes come
 * from. The functions that call partners (functions/config/resources.ts `outbound`) run in those subnets; the
 * others stay outside the VPC.
 *
 * AWS services: DynamoDB and S3 through gateway endpoints (free, and their traffic stays off the
 * NAT gateways); SQS and KMS through the NAT gateways (an interface endpoint per service and zone
 * would cost more than the little data they carry).
 */
import { CfnOutput, Fn, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DEFAULT_LOG_RETENTION_DAYS } from '../retention-config.js';

export interface FixedEgressProps {
  /** NAT gateways, one per availability zone, each with its own Elastic IP. */
  readonly addresses: number;
  /** Days the flow log keeps its records (`koerier:logRetentionDays`); default 90. */
  readonly logRetentionDays?: number;
}

export class FixedEgress extends Construct {
  readonly vpc: ec2.IVpc;
  /** For the outbound functions: nothing may connect to them; they may connect anywhere (the SSRF guard decides where). */
  readonly securityGroup: ec2.SecurityGroup;
  readonly elasticIps: readonly ec2.CfnEIP[];

  constructor(scope: Construct, id: string, props: FixedEgressProps) {
    super(scope, id);
    const elasticIps = Array.from({ length: props.addresses }, (_, index) => {
      const eip = new ec2.CfnEIP(this, `Address${index + 1}`, { domain: 'vpc' });
      // Partners allow-list these: keep them when the stack is deleted or the VPC replaced.
      eip.applyRemovalPolicy(RemovalPolicy.RETAIN);
      return eip;
    });
    this.elasticIps = elasticIps;
    // Rejected traffic only: what the security group refuses, for an investigation; accepted flows would cost per GB.
    const flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
      retention: (props.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS) as logs.RetentionDays,
    });
    const vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: props.addresses,
      natGateways: props.addresses,
      natGatewayProvider: ec2.NatProvider.gateway({ eipAllocationIds: elasticIps.map((eip) => eip.attrAllocationId) }),
      subnetConfiguration: [
        { name: 'nat', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 28 },
        { name: 'outbound', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
      ],
      gatewayEndpoints: {
        DynamoDb: { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB },
        S3: { service: ec2.GatewayVpcEndpointAwsService.S3 },
      },
      flowLogs: {
        Rejected: {
          destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup),
          trafficType: ec2.FlowLogTrafficType.REJECT,
        },
      },
    });
    // CDK's Vpc class declares `vpnGatewayId?: string` where IVpc has `string`: equal but for exactOptionalPropertyTypes.
    this.vpc = vpc as unknown as ec2.IVpc;
    this.securityGroup = new ec2.SecurityGroup(this, 'OutboundFunctions', {
      vpc: this.vpc,
      description: 'Koerier functions that call partners: no inbound; outbound anywhere, the SSRF guard decides where',
      allowAllOutbound: true,
    });
    new CfnOutput(this, 'EgressAddresses', {
      key: 'EgressAddresses',
      description:
        'The public addresses deliveries, token requests and validation handshakes come from: for partners to allow-list',
      value: Fn.join(
        ',',
        elasticIps.map((eip) => eip.attrPublicIp),
      ),
    });
  }
}
