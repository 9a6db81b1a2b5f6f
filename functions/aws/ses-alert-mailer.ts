/**
 * `AlertMailer` (core/alerts/send-alerts.ts) through Amazon SES v2: one SendEmail per message, from
 * the deployment's verified sending identity (`koerier:alertSender`, docs/DEPLOYING.md), to which
 * the alerts function's role alone may send (`ses:SendEmail` on that identity). Plain text only.
 */
import { SendEmailCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import type { AlertMail, AlertMailer } from '../core/alerts/send-alerts.js';

export class SesAlertMailer implements AlertMailer {
  constructor(
    private readonly client: SESv2Client,
    /** The From address, of the verified identity. */
    private readonly from: string,
  ) {}

  async send(mail: AlertMail): Promise<void> {
    await this.client.send(
      new SendEmailCommand({
        FromEmailAddress: this.from,
        Destination: { ToAddresses: [mail.to] },
        Content: {
          Simple: {
            Subject: { Data: mail.subject, Charset: 'UTF-8' },
            Body: { Text: { Data: mail.text, Charset: 'UTF-8' } },
          },
        },
      }),
    );
  }
}
