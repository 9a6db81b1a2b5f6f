/**
 * Hono (on Node with @hono/node-server, or Bun, Deno, workers): the receiver takes Hono's
 * web-standard Request as it is.
 *   app.all('/hook', honoHandler(receiver));
 */
import type { Context } from 'hono';
import type { Receiver } from '../receiver.js';

export function honoHandler(receiver: Receiver): (c: Context) => Promise<Response> {
  return (c) => receiver.fetch(c.req.raw);
}
