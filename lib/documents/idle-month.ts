/**
 * COST.md's idle month (issue 31 item 3), priced from what the synthesized template deploys
 * (lib/documents/deployed-inventory.ts) at bench/cost/model.ts's prices, and the CloudWatch Logs
 * bytes one event costs as bench/log-volume.ts measured them.
 */
import { idlePollingPerMonth, PRICES, usd } from '../../bench/cost/model.js';
import type { DeployedInventory } from './deployed-inventory.js';

/** bench/results/log-volume.json, as bench/run.ts writes it. */
export interface LogVolume {
  readonly measuredAt: string;
  readonly logLevel: string;
  readonly scenario: string;
  readonly events: number;
  readonly bytesPerEvent: number;
  readonly linesPerEvent: number;
}

const GB = 1024 ** 3;

export function renderIdleMonth(inventory: DeployedInventory, logs: LogVolume): string {
  const polling = idlePollingPerMonth(inventory.queuesWithTrigger);
  const keys = inventory.kmsKeys * PRICES.kms.perKeyMonth;
  const alarms = inventory.alarms * PRICES.cloudWatch.perAlarmMonth;
  const dashboards = inventory.dashboards * PRICES.cloudWatch.perDashboardMonth;
  const total = polling.dollars + keys + alarms + dashboards;
  const logsPerMillion = ((logs.bytesPerEvent * 1_000_000) / GB) * PRICES.cloudWatch.logsPerGbIngested;
  return [
    'Counted from the template `cdk synth` makes with cdk.json, the required settings and `koerier:alarmEmail` (the inventory in [DEPLOYING.md](DEPLOYING.md#what-the-stack-creates-and-what-it-costs-at-rest)); a console, `cloudfront-waf` or fixed egress addresses add their own.',
    '',
    '| item | count | per month |',
    '|---|---|---|',
    `| SQS long polling by the event sources (${inventory.queuesWithTrigger} queues with a trigger) | ${polling.requests.toLocaleString('en-US')} requests | ${usd(polling.dollars)} |`,
    `| KMS keys (customer managed) | ${inventory.kmsKeys} | ${usd(keys)} |`,
    `| CloudWatch alarms (standard resolution) | ${inventory.alarms} | ${usd(alarms)} |`,
    `| CloudWatch dashboards (the first 3 of an account are free) | ${inventory.dashboards} | ${usd(dashboards)} |`,
    '| Lambda, API Gateway, DynamoDB on-demand, S3 requests, CloudWatch Logs ingestion | 0 | $0.00 |',
    `| **total** | | **${usd(total)}** |`,
    '',
    `Logs once events flow: the functions write ${logs.bytesPerEvent.toLocaleString('en-US')} bytes of log (${logs.linesPerEvent} lines) per event at \`${logs.logLevel}\`, measured by bench/log-volume.ts on the laptop host (${logs.scenario}; ${logs.events} events, ${logs.measuredAt.slice(0, 10)}, bench/results/log-volume.json): ${usd(logsPerMillion)} per million events at ${usd(PRICES.cloudWatch.logsPerGbIngested)} per GB ingested. Not in that figure: Lambda's own START/END/REPORT lines per invocation and API Gateway's access log line per request, which the laptop does not write.`,
    '',
  ].join('\n');
}
