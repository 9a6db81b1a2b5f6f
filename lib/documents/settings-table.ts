/** docs/DEPLOYING.md's settings table (issue 31 item 2), made from the one list of settings. */
import type { SettingDescription } from '../settings-catalogue.js';

export function renderSettingsTable(settings: readonly SettingDescription[]): string {
  const rows = settings.map((setting) => `| \`${setting.key}\` | ${setting.default} | ${setting.meaning} |`);
  return ['| context key | default | meaning |', '|---|---|---|', ...rows, ''].join('\n');
}
