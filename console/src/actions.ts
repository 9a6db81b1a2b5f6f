/** What the pages share: who may change state, the page context, and how a button runs an action. */
import { ApiError, type Api } from './api.js';
import type { Session } from './auth.js';
import { announce, h } from './dom.js';

export interface PageContext {
  readonly api: Api;
  readonly session: Session;
  readonly main: HTMLElement;
  /** Draws the current page again, e.g. after an action. */
  readonly refresh: () => Promise<void>;
}

export const isOperator = (session: Session) => session.scopes.includes('admin');

/**
 * Changing a subscription, resuming and redriving change state, which only a confidential client
 * may (EDU-2): a user of the stack's user pool holds read scopes only and is told to use the
 * partner's client instead.
 */
export const mayManage = (session: Session) => session.scopes.includes('subscriptions:manage');

/** What a refusal says to a person: its detail (the status and title are for logs). */
export function refusalText(error: unknown): string {
  if (error instanceof ApiError) return error.detail ?? error.title;
  return error instanceof Error ? error.message : String(error);
}

/** Runs an action from a button: disabled while it runs, the outcome announced, the page drawn again. */
export async function act(
  context: PageContext,
  button: HTMLButtonElement,
  action: () => Promise<unknown>,
  done: string,
): Promise<void> {
  button.disabled = true;
  try {
    await action();
    await context.refresh();
    // After the page is drawn again, so the message outlives the redraw.
    announce(done);
  } catch (error) {
    announce(refusalText(error));
    button.disabled = false;
  }
}

/** A button that runs `action` through `act`. */
export function actionButton(
  context: PageContext,
  label: string,
  action: () => Promise<unknown>,
  done: string,
  attributes: Record<string, string | boolean | undefined> = {},
): HTMLButtonElement {
  const button = h('button', { type: 'button', ...attributes }, label);
  button.addEventListener('click', () => void act(context, button, action, done));
  return button;
}
