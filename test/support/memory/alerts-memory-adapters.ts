/** In-memory adapters of the alert ports (core/alerts/send-alerts.ts), with the DynamoDB adapter's semantics. */
import type { AlertMail, AlertMailer, AlertWindows } from '../../../functions/core/alerts/send-alerts.js';

export class MemoryAlertWindows implements AlertWindows {
  readonly windows = new Map<string, { holder: string; until: number }>();
  readonly counters = new Map<string, number>();

  async claim(key: string, holder: string, now: number, until: number): Promise<boolean> {
    const held = this.windows.get(key);
    if (held && held.until > now && held.holder !== holder) return false;
    this.windows.set(key, { holder, until });
    return true;
  }

  async markSent(key: string, holder: string): Promise<void> {
    const held = this.windows.get(key);
    if (held?.holder === holder) this.windows.set(key, { ...held, holder: `sent:${holder}` });
  }

  async count(key: string, n: number): Promise<number> {
    const value = (this.counters.get(key) ?? 0) + n;
    this.counters.set(key, value);
    return value;
  }
}

export class MemoryAlertMailer implements AlertMailer {
  readonly sent: AlertMail[] = [];
  failWith?: Error;

  async send(mail: AlertMail): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.sent.push(mail);
  }
}
