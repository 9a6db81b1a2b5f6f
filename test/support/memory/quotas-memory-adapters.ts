/** The quota ports in memory, with the same conditions as the DynamoDB adapters, for unit tests. */
import type { HoldLedger, Holds } from '../../../functions/core/quotas/holds.js';
import type { UsageDecision, UsageWindow } from '../../../functions/core/quotas/usage-window.js';

export class MemoryHoldLedger implements HoldLedger {
  readonly ledgers = new Map<string, Holds>();

  async load(key: string): Promise<Holds | undefined> {
    return this.ledgers.get(key);
  }

  async save(key: string, entries: Readonly<Record<string, number>>, expectedVersion: number): Promise<boolean> {
    if ((this.ledgers.get(key)?.version ?? 0) !== expectedVersion) return false;
    this.ledgers.set(key, { entries: { ...entries }, version: expectedVersion + 1 });
    return true;
  }
}

export class MemoryUsageWindow implements UsageWindow {
  readonly used = new Map<string, number>();

  async add(key: string, amount: number, limit: number, windowStart: number): Promise<UsageDecision> {
    const used = this.used.get(`${key}@${windowStart}`) ?? 0;
    if (used + amount > limit) return { added: false, used };
    this.used.set(`${key}@${windowStart}`, used + amount);
    return { added: true };
  }

  async subtract(key: string, amount: number, windowStart: number): Promise<void> {
    this.used.set(`${key}@${windowStart}`, (this.used.get(`${key}@${windowStart}`) ?? 0) - amount);
  }
}
