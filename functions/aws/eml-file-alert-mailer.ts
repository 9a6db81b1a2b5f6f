/**
 * The laptop's stand-in for SES (as its key files stand in for KMS): each alert e-mail is written
 * as an RFC 5322 message, `<time>-<n>.eml`, into a folder of the host's state directory
 * (`<stateDir>/alert-mail`, docs/OPERATIONS.md "Out-of-band alerts"), where a mail client, a test
 * or `cat` reads it. Written under a temporary name and renamed, so a reader never sees half a mail.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AlertMail, AlertMailer } from '../core/alerts/send-alerts.js';

export class EmlFileAlertMailer implements AlertMailer {
  constructor(
    private readonly directory: string,
    private readonly from: string,
    private readonly now: () => number = Date.now,
  ) {}

  async send(mail: AlertMail): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    const at = new Date(this.now());
    const name = `${at.toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.eml`;
    const text = [
      `From: ${this.from}`,
      `To: ${mail.to}`,
      `Subject: ${encodedWord(mail.subject)}`,
      `Date: ${at.toUTCString()}`,
      `Message-ID: <${randomUUID()}@koerier.local>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=UTF-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      mail.text.replace(/\r?\n/g, '\r\n'),
    ].join('\r\n');
    const temporary = join(this.directory, `.${name}.tmp`);
    await writeFile(temporary, text, { mode: 0o600 });
    await rename(temporary, join(this.directory, name));
  }
}

/** RFC 2047 for a subject that is not plain ASCII. */
function encodedWord(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`;
}
