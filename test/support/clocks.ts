/**
 * Clocks for code that takes one (`() => number`, epoch ms), so a test decides where in time it is
 * instead of waiting for the right moment.
 */
import type * as RateWindowModule from '../../functions/aws/dynamodb-rate-window.js';
import type * as ClientThrottleModule from '../../functions/core/throttling/client-throttle.js';

/** Milliseconds since the epoch, as `Date.now`. */
type Clock = () => number;

/**
 * A clock that runs with the system clock but reads `msIntoMinute` past the start of a clock minute
 * at the moment it is made (so it may read up to a minute ahead of the system clock). For the
 * publish rate window, whose window is the clock minute: a test that starts 1 s into a minute has
 * the rest of it before a new window begins, without waiting for one.
 */
export function clockIntoMinute(msIntoMinute: number, systemClock: Clock = Date.now): Clock {
  const shift = (((msIntoMinute - (systemClock() % 60_000)) % 60_000) + 60_000) % 60_000;
  return () => systemClock() + shift;
}

/*
 * The handlers build their publish window and their container throttle themselves, each on the
 * system clock. A test that sets the window's clock must set the throttle's too, since the throttle
 * remembers the window's refusals until the window's end. These two build the bodies of `vi.mock`
 * factories for the two modules: the real classes, given `clock` unless the caller gives one.
 */

export function rateWindowModuleWithClock(original: typeof RateWindowModule, clock: Clock): typeof RateWindowModule {
  class DynamoDbRateWindow extends original.DynamoDbRateWindow {
    constructor(...[client, tableName, options]: ConstructorParameters<typeof original.DynamoDbRateWindow>) {
      super(client, tableName, { clock, ...options });
    }
  }
  return { ...original, DynamoDbRateWindow };
}

export function clientThrottleModuleWithClock(
  original: typeof ClientThrottleModule,
  clock: Clock,
): typeof ClientThrottleModule {
  class ClientThrottle extends original.ClientThrottle {
    constructor(...[options]: ConstructorParameters<typeof original.ClientThrottle>) {
      super({ clock, ...options });
    }
  }
  return { ...original, ClientThrottle };
}
