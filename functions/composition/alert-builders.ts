/**
 * What out-of-band alerts run on (issue 30 item 3, core/alerts): the alerts queue the delivery
 * function raises them on, the rate windows and e-mail (webhooks: `alertWebhook` in ./adapters.ts, beside the other outbound HTTP). E-mail goes
 * through SES from `config.alerts.sender`; on the laptop (`config.alerts.mailDir`) it is written as
 * .eml files instead; with neither, e-mail contacts are skipped (and logged).
 */
import { DynamoDbAlertWindows } from '../aws/dynamodb-alert-windows.js';
import { EmlFileAlertMailer } from '../aws/eml-file-alert-mailer.js';
import { SesAlertMailer } from '../aws/ses-alert-mailer.js';
import { SqsMessageQueue } from '../aws/sqs-message-queue.js';
import { dynamodbClient, sesv2Client, sqsClient } from './client-kinds.js';
import type { Member } from './composition.js';

/** The laptop's From address when the host names none. */
const LAPTOP_SENDER = 'koerier-alerts@koerier.local';

export const alertQueue: Member<'alertQueue'> = (c) => {
  const queue = new SqsMessageQueue(c.client(sqsClient), c.config.resources.queueUrl('alerts'));
  return { raise: (signals) => queue.send(signals.map((signal) => ({ body: JSON.stringify(signal) }))) };
};

export const alertWindows: Member<'alertWindows'> = (c) =>
  new DynamoDbAlertWindows(c.client(dynamodbClient), c.config.resources.table('idempotency'));

export const alertMailer: Member<'alertMailer'> = (c) => {
  const { sender, mailDir } = c.config.alerts;
  if (mailDir) return new EmlFileAlertMailer(mailDir, sender ?? LAPTOP_SENDER, c.clock);
  return sender ? new SesAlertMailer(c.client(sesv2Client), sender) : undefined;
};
