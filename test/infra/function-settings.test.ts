/**
 * Issue 27 §2, settings: every function of the synthesised stack starts in AWS. A Lambda container
 * reads its settings once (functions/composition/lambda-dependencies.ts): `loadConfig` on its
 * environment, then each adapter its handler lists in `lambdaDependencies({ … })`, built on first use,
 * reads the names of the tables, queues, buckets and keys it sends to
 * (functions/config/resource-names.ts). So, per function in the template: its
 * Environment.Variables, each CloudFormation reference replaced by what CloudFormation puts there (a
 * queue URL for a queue, a table name, a key ARN in the region's partition), plus what the Lambda
 * runtime sets, go through `loadConfig` and then through every builder its handler lists — real
 * builders and real SDK clients, made and never sent with. A setting that is missing or invalid
 * fails here, as the function would fail its first request. A name an adapter reads only inside
 * one operation (the deliveries dead-letter queue, on a redrive) is not reached by building it;
 * the permissions test (issue 27 §2) follows the operations themselves.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { clientAdmission } from '../../functions/app/client-throttling.js';
import type { KoerierDependencies } from '../../functions/app/dependencies.js';
import { createLogger } from '../../functions/app/logger.js';
import {
  composeDependencies,
  createComposition,
  type Builders,
  type LazyMember,
} from '../../functions/composition/composition.js';
import { loadConfig, settingEnv, type KoerierConfig } from '../../functions/config.js';
import { systemClock } from '../../functions/core/ports/clock.js';
import { koerierResources, REPO_ROOT } from '../../lib/koerier-stack.js';
import { paramsAndSecretsLayerArn, type KoerierRegionName } from '../../lib/regions.js';
import { runtimeSettings } from '../../lib/runtime-settings.js';
import { logicalId, synthContext } from './synth.js';
import { everyOption, synthInRegion, TEST_ACCOUNT, type TemplateJson } from './synth-in-region.js';

/** Where the template is deployed: what CloudFormation and Lambda fill in. */
interface Deployment {
  readonly region: string;
  readonly partition: string;
  readonly urlSuffix: string;
  readonly stackName: string;
  readonly template: TemplateJson;
}

/** Stable stand-ins for the random parts of physical names, derived from the logical ID. */
const suffixOf = (logicalId: string) => logicalId.slice(-12).toUpperCase();
const keyIdOf = (logicalId: string) =>
  `1234abcd-12ab-34cd-56ef-${Buffer.from(logicalId).toString('hex').padEnd(12, '0').slice(0, 12)}`;

/** What CloudFormation puts in place of a Ref to a resource of this type. */
function referenceValue(id: string, deployment: Deployment): string {
  const { region, urlSuffix, stackName, partition } = deployment;
  const type = deployment.template.Resources[id]?.Type ?? 'no such resource';
  switch (type) {
    case 'AWS::SQS::Queue':
      return `https://sqs.${region}.${urlSuffix}/${TEST_ACCOUNT}/${stackName}-${id}-${suffixOf(id)}`;
    case 'AWS::DynamoDB::Table':
    case 'AWS::DynamoDB::GlobalTable':
      return `${stackName}-${id}-${suffixOf(id)}`;
    case 'AWS::S3::Bucket':
      return `${stackName}-${id}-${suffixOf(id)}`.toLowerCase().slice(0, 63);
    case 'AWS::KMS::Key':
      return keyIdOf(id);
    case 'AWS::Cognito::UserPool':
      return `${region}_AbCdEf123`;
    case 'AWS::Cognito::UserPoolClient':
      return '1example23456789abcdefghij';
    case 'AWS::SecretsManager::Secret':
      return `arn:${partition}:secretsmanager:${region}:${TEST_ACCOUNT}:secret:${id}-AbCdEf`;
    default:
      throw new Error(`no deployed value for a Ref to ${id} (${type}): add one to this test`);
  }
}

/** What CloudFormation puts in place of Fn::GetAtt of this type's attribute. */
function attributeValue(id: string, attribute: string, deployment: Deployment): string {
  const { region, urlSuffix, partition } = deployment;
  const type = deployment.template.Resources[id]?.Type ?? 'no such resource';
  switch (`${type}.${attribute}`) {
    case 'AWS::KMS::Key.Arn':
      return `arn:${partition}:kms:${region}:${TEST_ACCOUNT}:key/${keyIdOf(id)}`;
    case 'AWS::ApiGatewayV2::Api.ApiEndpoint':
      return `https://a1b2c3d4e5.execute-api.${region}.${urlSuffix}`;
    case 'AWS::CloudFront::Distribution.DomainName':
      return 'd111111abcdef8.cloudfront.net';
    case 'AWS::Cognito::UserPool.ProviderURL':
      return `https://cognito-idp.${region}.${urlSuffix}/${region}_AbCdEf123`;
    default:
      throw new Error(`no deployed value for Fn::GetAtt ${id}.${attribute} (${type}): add one to this test`);
  }
}

/** A value of the template as the function sees it in AWS. */
function deployedValue(value: unknown, deployment: Deployment): string {
  if (typeof value === 'string') {
    // CloudFormation puts the secret's value in place of a dynamic reference (the CloudFront origin header).
    return value.replace(/\{\{resolve:secretsmanager:[^}]*\}\}/g, 'Zm9yLXRoZS1vcmlnaW4taGVhZGVyLW9ubHk');
  }
  if (typeof value !== 'object' || value === null)
    throw new Error(`unexpected environment value ${JSON.stringify(value)}`);
  const node = value as Record<string, unknown>;
  const pseudo: Record<string, string> = {
    'AWS::Region': deployment.region,
    'AWS::Partition': deployment.partition,
    'AWS::URLSuffix': deployment.urlSuffix,
    'AWS::AccountId': TEST_ACCOUNT,
    'AWS::StackName': deployment.stackName,
  };
  if (typeof node.Ref === 'string') return pseudo[node.Ref] ?? referenceValue(node.Ref, deployment);
  const getAtt = node['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return attributeValue(String(getAtt[0]), String(getAtt[1]), deployment);
  const join = node['Fn::Join'];
  if (Array.isArray(join) && Array.isArray(join[1]))
    return deployedValue(
      join[1].map((part: unknown) => deployedValue(part, deployment)).join(String(join[0])),
      deployment,
    );
  throw new Error(`no deployed value for ${JSON.stringify(value)}: add one to this test`);
}

/** What the Lambda runtime adds to every function's environment. */
function runtimeEnvironment(functionName: string, deployment: Deployment): Record<string, string> {
  return {
    AWS_REGION: deployment.region,
    AWS_DEFAULT_REGION: deployment.region,
    AWS_LAMBDA_FUNCTION_NAME: `${deployment.stackName}-${functionName}-AbCdEf123456`,
    AWS_SESSION_TOKEN: 'session-token-from-the-execution-role',
  };
}

/** The builders a handler lists in `lambdaDependencies({ … })`, each loaded from the module the handler imports it from. */
async function listedBuilders(entry: string): Promise<Partial<Builders>> {
  const file = path.join(REPO_ROOT, entry);
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const importedFrom = new Map<string, { module: string; exported: string }>();
  for (const statement of source.statements) {
    const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : undefined;
    if (
      !bindings ||
      !ts.isNamedImports(bindings) ||
      !ts.isStringLiteral((statement as ts.ImportDeclaration).moduleSpecifier)
    )
      continue;
    const specifier = ((statement as ts.ImportDeclaration).moduleSpecifier as ts.StringLiteral).text;
    for (const element of bindings.elements) {
      importedFrom.set(element.name.text, {
        module: path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts')),
        exported: (element.propertyName ?? element.name).text,
      });
    }
  }
  let listed: string[] | undefined;
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'lambdaDependencies'
    ) {
      const list = node.arguments[0];
      if (list === undefined || !ts.isObjectLiteralExpression(list))
        throw new Error(`${entry}: lambdaDependencies needs an object literal of builders`);
      listed = list.properties.map((property) => {
        if (!ts.isShorthandPropertyAssignment(property))
          throw new Error(`${entry}: only builders named by their import in the list`);
        return property.name.text;
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (listed === undefined) throw new Error(`${entry} does not call lambdaDependencies`);
  const builders: Record<string, unknown> = {};
  for (const name of listed) {
    const origin = importedFrom.get(name);
    if (origin === undefined) throw new Error(`${entry}: ${name} is not imported`);
    const module = (await import(origin.module)) as Record<string, unknown>;
    if (typeof module[origin.exported] !== 'function')
      throw new Error(`${entry}: ${origin.module} exports no builder ${origin.exported}`);
    builders[name] = module[origin.exported];
  }
  return builders as Partial<Builders>;
}

/** The builders that read the mTLS client certificate, through the extension, when they are built (functions/composition/adapters.ts, outboundHttp). */
const READS_CLIENT_CERTIFICATE: readonly LazyMember[] = ['deliveryHttp', 'handshakeHttp'];
/** The port functions/aws/client-certificate.ts asks the Parameters and Secrets extension on. */
const EXTENSION_PORT = '2773';

/** Every problem the function would meet in AWS, one line each; none when it starts and serves. */
async function startProblems(
  name: string,
  variables: Record<string, unknown>,
  layers: unknown[],
  deployment: Deployment,
): Promise<string[]> {
  let environment: Record<string, string>;
  try {
    environment = {
      ...Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, deployedValue(value, deployment)])),
      ...runtimeEnvironment(name, deployment),
    };
  } catch (error) {
    return [`${name}: ${(error as Error).message}`];
  }
  let config: KoerierConfig;
  try {
    config = loadConfig(environment);
  } catch (error) {
    return [`${name}: loadConfig: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  // The laptop's defaults would start, and be wrong in AWS: the metrics under another stack, links to nowhere, loopback sinks.
  if (config.stackName !== deployment.stackName)
    problems.push(`${name}: ${settingEnv.stackName} is ${config.stackName}, not the stack's name`);
  if (!/^https:\/\/[^/]+\/v1$/.test(config.publicBaseUrl))
    problems.push(`${name}: ${settingEnv.publicBaseUrl} is "${config.publicBaseUrl}", not the API's https URL`);
  if (config.webhookOrigin !== synthContext['koerier:webhookOrigin'])
    problems.push(`${name}: ${settingEnv.webhookOrigin} is ${config.webhookOrigin}`);
  if (config.allowLoopbackSinks || config.localKeysDir !== undefined || config.delivery.outboundCaFile !== undefined) {
    problems.push(
      `${name}: a laptop or test setting is set (${settingEnv.allowLoopbackSinks}, ${settingEnv.localKeysDir} or ${settingEnv.outboundCaFile})`,
    );
  }

  const spec = koerierResources.functions[name]!;
  const builders = await listedBuilders(spec.entry);
  const log = createLogger(config.logLevel);
  const composition = createComposition({
    config,
    log,
    admission: clientAdmission(config, log),
    clock: systemClock,
    options: {},
    clients: (kind) => kind.create(),
  });
  // The builders are the handler's own, read from its module: whatever they are, each is built once.
  const dependencies = composeDependencies(composition, builders as Builders) as KoerierDependencies;
  const members = Object.keys(builders) as (keyof KoerierDependencies)[];
  if (members.length === 0) problems.push(`${name}: its handler lists no adapter`);
  for (const member of members) {
    try {
      void dependencies[member];
    } catch (error) {
      problems.push(`${name}: building ${member}: ${(error as Error).message}`);
    }
  }
  const certificate = config.delivery.clientCertificate;
  if (
    certificate?.startsWith('arn:') &&
    members.some((member) => READS_CLIENT_CERTIFICATE.includes(member as LazyMember))
  ) {
    if (!layers.includes(paramsAndSecretsLayerArn(deployment.region)))
      problems.push(`${name}: reads ${certificate} without the Parameters and Secrets extension layer`);
    const port = environment['PARAMETERS_SECRETS_EXTENSION_HTTP_PORT'];
    if (port !== undefined && port !== EXTENSION_PORT)
      problems.push(`${name}: the extension listens on ${port}, the function asks on ${EXTENSION_PORT}`);
  }
  return problems;
}

const atBound = (bound: 'min' | 'max') =>
  Object.fromEntries(runtimeSettings.map((setting) => [setting.contextKey, setting[bound]]));

describe('CARD-3, issue 27 §2: every function starts in AWS with the settings its stack gives it', () => {
  it.each([
    ['cdk.json with the required settings', 'eu-central-1', {}],
    [
      'every option, every runtime setting at its maximum',
      'eu-west-1',
      { ...everyOption('eu-west-1'), ...atBound('max') },
    ],
    [
      'every option the sovereign cloud allows, every runtime setting at its minimum',
      'eusc-de-east-1',
      { ...everyOption('eusc-de-east-1'), ...atBound('min') },
    ],
  ] as [string, KoerierRegionName, Record<string, unknown>][])(
    'CARD-3: %s, in %s: each function’s environment, as deployed, passes loadConfig and gives every adapter its handler lists what it reads',
    async (_label, region, context) => {
      const { stack, template } = synthInRegion(region, context);
      const info = RegionInfo.get(region);
      const deployment: Deployment = {
        region,
        partition: info.partition!,
        urlSuffix: info.domainSuffix!,
        stackName: stack.stackName,
        template,
      };
      const names = [...stack.functions.keys()];
      expect(names.sort()).toEqual(Object.keys(koerierResources.functions).sort());
      const problems: string[] = [];
      for (const name of names) {
        const properties = template.Resources[logicalId(stack, stack.functions.get(name)!.function)]!.Properties;
        problems.push(
          ...(await startProblems(name, properties.Environment.Variables, properties.Layers ?? [], deployment)),
        );
      }
      expect(problems).toEqual([]);
    },
    120_000,
  );
});
