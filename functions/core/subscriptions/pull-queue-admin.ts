/**
 * What the subscriptions use case does to a pull subscription's queues (docs/PULL.md): make them
 * with the subscription, change them with its settings, delete them with it. The rest of the
 * queues' port (send, receive, settle) is pull delivery's (`core/pull/pull-queues.ts`).
 */
import type { PullSettings } from './subscription.js';

export interface PullQueueAdmin {
  /** Creates (or finds, with the same settings) the subscription's queue and dead-letter queue. */
  create(subscriptionId: string, settings: PullSettings): Promise<void>;
  /** Applies changed settings (retention, the dead-letter backstop). */
  update(subscriptionId: string, settings: PullSettings): Promise<void>;
  /** Deletes both queues; a queue already gone is not an error. */
  remove(subscriptionId: string): Promise<void>;
}
