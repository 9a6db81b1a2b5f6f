/**
 * Express 4 and 5: Express's request and response are node:http's, so this is the node:http
 * handler with Express's `next` for what the receiver cannot answer itself. Mount it before any
 * JSON body parser on its path:
 *   app.all('/hook', expressHandler(receiver));
 */
import type { NextFunction, Request, Response } from 'express';
import type { Receiver } from '../receiver.js';
import { nodeHandler, type NodeAdapterOptions } from './node.js';

export function expressHandler(
  receiver: Receiver,
  options: NodeAdapterOptions = {},
): (req: Request, res: Response, next: NextFunction) => void {
  const handler = nodeHandler(receiver, options);
  return (req, res, next) => handler(req, res, next);
}
