/**
 * The subscription page's charts (issue 30 item 4): delivered, failed and dead-lettered attempts
 * per hour, and the delivery latency per hour (median and highest), over the last 7 days. Read
 * from the attempt history page by page (delivery-week.ts says why that history), up to a bound a
 * person waits for; when the week held more, the chart says it counted only the newest.
 */
import type { Api } from './api.js';
import { h } from './dom.js';
import { HOUR_MS, WEEK_HOURS, hourlyDeliveries, type WeekAttempt } from './delivery-week.js';
import { word } from './delivery-words.js';
import { language, t } from './i18n.js';
import { lineChart, stackedBarChart } from './svg-chart.js';

/** Pages of 100 attempts read at most: 2,000 attempts, a few seconds on a slow line. */
const MAX_PAGES = 20;

export async function deliveryCharts(api: Api, id: string, now = Date.now()): Promise<HTMLElement> {
  const since = new Date(Math.floor(now / HOUR_MS) * HOUR_MS - (WEEK_HOURS - 1) * HOUR_MS).toISOString();
  const attempts: WeekAttempt[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const { data } = await api.GET('/subscriptions/{id}/deliveries', {
      params: { path: { id }, query: { limit: 100, since, ...(cursor ? { cursor } : {}) } },
    });
    attempts.push(...(data?.attempts ?? []));
    cursor = data?.next
      ? (new URL(data.next, 'https://koerier.invalid').searchParams.get('cursor') ?? undefined)
      : undefined;
    pages++;
  } while (cursor && pages < MAX_PAGES);

  const week = hourlyDeliveries(attempts, now);
  const section = h('section', { 'aria-labelledby': 'charts-heading', class: 'charts' });
  section.append(h('h2', { id: 'charts-heading' }, t('charts')));
  if (week.counted === 0) {
    section.append(h('p', {}, t('noAttemptsWeek')));
    return section;
  }
  const locale = language() === 'nl' ? 'nl-NL' : 'en-GB';
  const hourLabel = (start: number) =>
    new Date(start).toLocaleString(locale, { weekday: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  const ticks = week.hours
    .map((start, index) => ({ start, index }))
    .filter(({ start }) => new Date(start).getHours() === 0)
    .map(({ start, index }) => ({
      index,
      label: new Date(start).toLocaleDateString(locale, { weekday: 'short', day: 'numeric' }),
    }));
  const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
  const names = { delivered: word('delivered'), failed: t('failed').toLowerCase(), dead: word('dead-lettered') };
  section.append(
    stackedBarChart({
      id: 'chart-outcomes',
      title: `${t('chartOutcomes')} (${t('chartFrom').toLowerCase()})`,
      summary: `${names.delivered}: ${sum(week.delivered)}, ${names.failed}: ${sum(week.failed)}, ${names.dead}: ${sum(week.deadLettered)}.`,
      slots: week.hours,
      series: [
        { name: names.delivered, className: 'series-delivered', values: week.delivered },
        { name: names.failed, className: 'series-failed', values: week.failed },
        { name: names.dead, className: 'series-dead-lettered', values: week.deadLettered },
      ],
      // The axis's middle may fall between whole counts (2.5 of 5).
      format: (value) => (Number.isInteger(value) ? String(value) : value.toFixed(1)),
      slotLabel: hourLabel,
      ticks,
    }),
    lineChart({
      id: 'chart-latency',
      title: t('chartLatency'),
      summary: latencySummary(week.medianLatency, week.highestLatency),
      slots: week.hours,
      series: [
        { name: t('median'), className: 'series-median', values: week.medianLatency },
        { name: t('highest'), className: 'series-highest', values: week.highestLatency },
      ],
      format: (value) => `${Math.round(value)} ms`,
      slotLabel: hourLabel,
      ticks,
    }),
  );
  if (cursor) section.append(h('p', { class: 'notice' }, t('chartPartial')));
  return section;
}

function latencySummary(medians: readonly (number | undefined)[], highest: readonly (number | undefined)[]): string {
  const present = (values: readonly (number | undefined)[]) => values.filter((v): v is number => v !== undefined);
  const top = Math.max(...present(highest));
  const lowestMedian = Math.min(...present(medians));
  return `${t('median')} ${t('perHour')}: ${lowestMedian}–${Math.max(...present(medians))} ms; ${t('highest')}: ${top} ms.`;
}
