/**
 * The generated parts of docs/DEPLOYING.md and docs/COST.md (issue 31 items 2 and 3): the settings
 * table from the one list of settings, and the resource inventory and idle month from the template
 * `cdk synth` makes with cdk.json and the required settings. `npm run docs:generate`
 * (bin/generate-documents.ts) writes them; test/infra/generated-documents.test.ts fails when the
 * files hold anything else.
 */
import { settingsCatalogue } from '../settings-catalogue.js';
import { inventoryOf, renderInventory, type TemplateJson } from './deployed-inventory.js';
import { renderIdleMonth, type LogVolume } from './idle-month.js';
import { withMarkedSection } from './marked-sections.js';
import { renderSettingsTable } from './settings-table.js';

/** The deployment the documents describe: the guide's required settings, with alarms mailed as it advises. */
export const documentedDeploymentContext: Readonly<Record<string, unknown>> = {
  'koerier:issuer': 'https://login.example.org/realms/koerier',
  'koerier:audience': 'koerier',
  'koerier:jwksUrl': 'https://login.example.org/realms/koerier/protocol/openid-connect/certs',
  'koerier:allowedOrigins': 'events.partner.example.org',
  'koerier:webhookOrigin': 'koerier.example.org',
  'koerier:publishers': { 'partner-lvs': ['urn:nld:oin:00000001823288444000:'] },
  'koerier:alarmEmail': 'ops@example.org',
  // The construct paths the inventory names resources by.
  'aws:cdk:enable-path-metadata': true,
};

export interface GeneratedSections {
  readonly settingsTable: string;
  readonly inventory: string;
  readonly idleMonth: string;
}

export function generatedSections(template: TemplateJson, logs: LogVolume): GeneratedSections {
  const inventory = inventoryOf(template);
  return {
    settingsTable: renderSettingsTable(settingsCatalogue),
    inventory: renderInventory(inventory),
    idleMonth: renderIdleMonth(inventory, logs),
  };
}

/** The two documents with their generated sections replaced. */
export function withGeneratedSections(
  documents: { readonly deploying: string; readonly cost: string },
  sections: GeneratedSections,
): { deploying: string; cost: string } {
  return {
    deploying: withMarkedSection(
      withMarkedSection(documents.deploying, 'settings-table', sections.settingsTable),
      'resource-inventory',
      sections.inventory,
    ),
    cost: withMarkedSection(documents.cost, 'idle-month', sections.idleMonth),
  };
}
