/**
 * The edge between an EventBridge schedule and a scheduled app (lib/constructs/koerier-function.ts
 * `schedule`; on the laptop, local/host.ts runs it on a timer): `scheduledHandler(laneSweeperApp)(awsDependencies)`
 * is the lane sweeper's Lambda handler. Built on the first run, not at import. The event carries
 * nothing the app needs: the time comes from the dependencies' clock.
 */
import type { Context } from 'aws-lambda';
import type { KoerierDependencies } from '../../app/dependencies.js';
import { startInvocation } from '../../app/logger.js';
import type { ScheduledApp } from '../../app/scheduled-app.js';

export type ScheduledHandler = (event?: unknown, context?: Partial<Context>) => Promise<void>;

export function scheduledHandler<D>(
  makeApp: (deps: D) => ScheduledApp,
): (dependencies: () => D & Pick<KoerierDependencies, 'metrics'>) => ScheduledHandler {
  return (dependencies) => {
    let app: ScheduledApp | undefined;
    return async (_event, context) => {
      const deps = dependencies();
      startInvocation(context);
      app ??= makeApp(deps);
      await app();
      deps.metrics.flush();
    };
  };
}
