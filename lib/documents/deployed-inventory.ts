/**
 * What a synthesized Koerier template deploys, counted and named (issue 31 item 3): the resource
 * inventory of docs/DEPLOYING.md and the counts COST.md's idle month prices. Names are the
 * constructs' paths in the stack (the template's `aws:cdk:path` metadata), so they read as the code
 * names them; a template without that metadata falls back to logical IDs.
 */

export interface TemplateResource {
  readonly Type: string;
  // A CloudFormation template is untyped JSON; only the few properties read below are relied on.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly Properties?: Record<string, any>;
  readonly Metadata?: Record<string, unknown>;
}

export interface TemplateJson {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
}

export interface InventoryRow {
  readonly what: string;
  readonly names: readonly string[];
}

export interface DeployedInventory {
  readonly rows: readonly InventoryRow[];
  readonly kmsKeys: number;
  readonly alarms: number;
  readonly dashboards: number;
  /** SQS queues a Lambda event source polls, idle or not. */
  readonly queuesWithTrigger: number;
}

export function inventoryOf(template: TemplateJson): DeployedInventory {
  const resources = Object.entries(template.Resources);
  const ofType = (type: string) => resources.filter(([, resource]) => resource.Type === type);
  const nameOf = (id: string) => resourceName(id, template.Resources[id]!);
  const names = (type: string) => ofType(type).map(([id]) => nameOf(id));

  const deadLetterIds = new Set(
    ofType('AWS::SQS::Queue').flatMap(([, queue]) =>
      arnTarget(queue.Properties?.['RedrivePolicy']?.deadLetterTargetArn),
    ),
  );
  const queues = ofType('AWS::SQS::Queue');
  const triggers = ofType('AWS::Lambda::EventSourceMapping').map(([, mapping]) => {
    const queue = arnTarget(mapping.Properties?.['EventSourceArn'])[0];
    const fn = referenced(mapping.Properties?.['FunctionName'])[0];
    return `${fn ? nameOf(fn) : '?'} ← ${queue ? nameOf(queue) : '?'}`;
  });
  const rows: InventoryRow[] = [
    { what: 'DynamoDB tables', names: names('AWS::DynamoDB::Table') },
    { what: 'SQS queues', names: queues.filter(([id]) => !deadLetterIds.has(id)).map(([id]) => nameOf(id)) },
    { what: 'SQS dead-letter queues', names: queues.filter(([id]) => deadLetterIds.has(id)).map(([id]) => nameOf(id)) },
    { what: 'S3 buckets', names: names('AWS::S3::Bucket') },
    { what: 'KMS keys (customer managed)', names: names('AWS::KMS::Key') },
    { what: 'Lambda functions', names: names('AWS::Lambda::Function') },
    { what: 'queue triggers (function ← queue)', names: triggers },
    { what: 'CloudWatch alarms', names: names('AWS::CloudWatch::Alarm') },
    { what: 'CloudWatch dashboards', names: names('AWS::CloudWatch::Dashboard') },
    { what: 'CloudWatch log groups', names: names('AWS::Logs::LogGroup') },
    { what: 'SNS topics', names: names('AWS::SNS::Topic') },
    { what: 'API Gateway HTTP APIs', names: names('AWS::ApiGatewayV2::Api') },
    {
      what: 'HTTP API routes',
      names: ofType('AWS::ApiGatewayV2::Route').map(([, r]) => String(r.Properties?.['RouteKey'])),
    },
    { what: 'IAM roles', names: names('AWS::IAM::Role') },
  ];
  return {
    rows: rows.filter((row) => row.names.length > 0),
    kmsKeys: ofType('AWS::KMS::Key').length,
    alarms: ofType('AWS::CloudWatch::Alarm').length,
    dashboards: ofType('AWS::CloudWatch::Dashboard').length,
    queuesWithTrigger: new Set(
      ofType('AWS::Lambda::EventSourceMapping').flatMap(([, m]) => arnTarget(m.Properties?.['EventSourceArn'])),
    ).size,
  };
}

/** Rows whose names are too many to read are given by count alone. */
const LISTED_AT_MOST = 20;

export function renderInventory(inventory: DeployedInventory): string {
  const lines = ['| resource | count | names |', '|---|---|---|'];
  for (const row of inventory.rows) {
    const listed =
      row.names.length <= LISTED_AT_MOST ? row.names.map((name) => `\`${name}\``).join(', ') : 'not listed';
    lines.push(`| ${row.what} | ${row.names.length} | ${listed} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** The construct path below the stack, without CDK's `Resource` leaf (and a function's `Function`). */
function resourceName(id: string, resource: TemplateResource): string {
  const path = resource.Metadata?.['aws:cdk:path'];
  if (typeof path !== 'string') return id;
  const parts = path.split('/').slice(1);
  if (parts.at(-1) === 'Resource') parts.pop();
  if (resource.Type === 'AWS::Lambda::Function' && parts.at(-1) === 'Function') parts.pop();
  return parts.join('/');
}

/** The logical IDs of `{ "Fn::GetAtt": [id, "Arn"] }`. */
function arnTarget(value: unknown): string[] {
  const getAtt = (value as { 'Fn::GetAtt'?: unknown } | undefined)?.['Fn::GetAtt'];
  return Array.isArray(getAtt) && typeof getAtt[0] === 'string' ? [getAtt[0]] : [];
}

/** The logical IDs of `{ "Ref": id }`. */
function referenced(value: unknown): string[] {
  const ref = (value as { Ref?: unknown } | undefined)?.Ref;
  return typeof ref === 'string' ? [ref] : [];
}
