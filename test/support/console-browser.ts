/**
 * The console's browser tests' shared steps (test/e2e/console*.test.ts): Debian's Chromium found
 * where it is installed, axe-core run on the page as it is (WCAG 2.1 A and AA) with a screenshot
 * into test-artifacts/console/, and the development sign-in (authorization code + PKCE).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestHost } from './host.js';

export const CHROMIUM = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (path) => path !== undefined && existsSync(path),
);
export const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'console');

/** axe-core on the page as it is now: no WCAG 2.1 A or AA violation. A screenshot named `name` first. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  // Evaluated through the DevTools protocol, which the console's Content-Security-Policy does not stop.
  await page.evaluate(await readFile(join(process.cwd(), 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(
            context: unknown,
            options: unknown,
          ): Promise<{ violations: { id: string; help: string; nodes: { target: unknown }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations.map((v) => ({ id: v.id, help: v.help, targets: v.nodes.map((n) => n.target) }));
  });
  expect(violations, `${name}: ${JSON.stringify(violations)}`).toEqual([]);
}

/** Signs in through the laptop's development identity as `client`, with `admin` when `operator`. */
export async function signIn(koerier: TestHost, page: Page, client: string, operator: boolean): Promise<void> {
  await page.goto(`${koerier.origin}/console/`);
  await page.getByRole('button', { name: /Aanmelden|Sign in/ }).click();
  await page.waitForURL(/\/oauth\/authorize/);
  await page.getByLabel(client, { exact: true }).check();
  if (operator) await page.getByLabel(/Als beheerder/).check();
  await page.getByLabel(/Aanmeldcode/).fill(koerier.host.signInCode);
  await page.getByRole('button', { name: /Aanmelden/ }).click();
  await page.waitForURL(/\/console\/(#.*)?$/);
  await page.getByRole('heading', { level: 1, name: /Abonnementen|Subscriptions/ }).waitFor();
}
