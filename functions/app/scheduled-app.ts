/** A scheduled app (functions/handlers/shared/scheduled-event.ts): one run, nothing in, nothing out; what it did, it logs. */
export type ScheduledApp = () => Promise<void>;
