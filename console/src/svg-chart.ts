/**
 * Charts as plain SVG, drawn by the console itself (issue 30 item 4: no chart package): stacked
 * bars of counts per time slot and lines of a measure per slot. Every value is an element with its
 * number in `data-*` attributes and a `<title>` a pointer or a screen reader's graphics mode reads;
 * the chart as a whole is an image named by its title and described by a summary (WCAG 2.1, 1.1.1).
 * Colours are given by CSS classes (console.css), each also told apart in the legend by its name.
 */
import { h } from './dom.js';
import { niceCeiling } from './chart-scale.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 840;
const HEIGHT = 220;
const MARGIN = { top: 10, right: 10, bottom: 28, left: 48 };

export interface ChartSeries {
  readonly name: string;
  /** CSS class of its marks, e.g. `series-delivered`. */
  readonly className: string;
  /** One value per slot; undefined where there is none (a line has a gap there). */
  readonly values: readonly (number | undefined)[];
}

export interface ChartSpec {
  /** An id prefix, unique on the page. */
  readonly id: string;
  readonly title: string;
  readonly summary: string;
  /** Start of each slot, epoch ms; slots are equally long. */
  readonly slots: readonly number[];
  readonly series: readonly ChartSeries[];
  /** How a value and a slot read in a mark's title, e.g. `3` → `3 ms`. */
  readonly format: (value: number) => string;
  readonly slotLabel: (start: number) => string;
  /** Where the x axis is labelled (e.g. each day's start): slot indexes and their labels. */
  readonly ticks: readonly { readonly index: number; readonly label: string }[];
}

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number> = {},
  ...children: (Node | string)[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

/** Stacked bars: per slot, the series' values on top of each other. */
export function stackedBarChart(spec: ChartSpec): HTMLElement {
  const totals = spec.slots.map((_, i) => spec.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const { plot, y, slotWidth } = frame(spec, Math.max(1, ...totals));
  spec.slots.forEach((start, i) => {
    let base = 0;
    const group = svg('g', { 'data-slot': new Date(start).toISOString() });
    const parts: string[] = [];
    for (const series of spec.series) {
      const value = series.values[i] ?? 0;
      parts.push(`${series.name}: ${spec.format(value)}`);
      if (value === 0) continue;
      group.append(
        svg('rect', {
          class: series.className,
          x: MARGIN.left + i * slotWidth + 0.5,
          y: y(base + value),
          width: Math.max(1, slotWidth - 1),
          height: y(base) - y(base + value),
          'data-series': series.name,
          'data-value': value,
        }),
      );
      base += value;
    }
    if (base === 0) return;
    group.prepend(svg('title', {}, `${spec.slotLabel(start)} — ${parts.join(', ')}`));
    plot.append(group);
  });
  return figure(spec, plot);
}

/** Lines: per series, a value per slot joined to the next; a slot without a value breaks the line. */
export function lineChart(spec: ChartSpec): HTMLElement {
  const highest = Math.max(1, ...spec.series.flatMap((s) => s.values.filter((v): v is number => v !== undefined)));
  const { plot, y, slotWidth } = frame(spec, highest);
  for (const series of spec.series) {
    const x = (i: number) => MARGIN.left + (i + 0.5) * slotWidth;
    let run: string[] = [];
    const lines = svg('g', { class: series.className, 'data-series': series.name });
    const close = () => {
      if (run.length > 1) lines.append(svg('polyline', { points: run.join(' ') }));
      run = [];
    };
    series.values.forEach((value, i) => {
      if (value === undefined) return close();
      run.push(`${x(i).toFixed(1)},${y(value).toFixed(1)}`);
      lines.append(
        svg(
          'circle',
          { cx: x(i).toFixed(1), cy: y(value).toFixed(1), r: 2.5, 'data-value': value },
          svg('title', {}, `${spec.slotLabel(spec.slots[i]!)} — ${series.name}: ${spec.format(value)}`),
        ),
      );
    });
    close();
    plot.append(lines);
  }
  return figure(spec, plot);
}

/** The SVG with its axes and grid; `y` maps a value to its height for a scale from 0 to `highest`. */
function frame(spec: ChartSpec, highest: number) {
  const innerHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const top = niceCeiling(highest);
  const y = (value: number) => MARGIN.top + innerHeight - (value / top) * innerHeight;
  const slotWidth = (WIDTH - MARGIN.left - MARGIN.right) / Math.max(1, spec.slots.length);
  const plot = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-labelledby': `${spec.id}-title`,
    'aria-describedby': `${spec.id}-summary`,
    class: 'chart',
    'data-chart': spec.id,
  });
  const axis = svg('g', { class: 'axis', 'aria-hidden': 'true' });
  for (const value of [0, top / 2, top]) {
    axis.append(
      svg('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(value), y2: y(value), class: 'grid' }),
      svg('text', { x: MARGIN.left - 6, y: y(value) + 4, 'text-anchor': 'end' }, spec.format(value)),
    );
  }
  for (const tick of spec.ticks) {
    const x = MARGIN.left + tick.index * slotWidth;
    axis.append(
      svg('line', { x1: x, x2: x, y1: MARGIN.top, y2: HEIGHT - MARGIN.bottom, class: 'grid' }),
      svg('text', { x: x + 3, y: HEIGHT - 8 }, tick.label),
    );
  }
  plot.append(axis);
  return { plot, y, slotWidth };
}

function figure(spec: ChartSpec, plot: SVGSVGElement): HTMLElement {
  return h(
    'figure',
    { class: 'chart' },
    h('figcaption', { id: `${spec.id}-title` }, spec.title),
    plot,
    h(
      'ul',
      { class: 'legend' },
      ...spec.series.map((s) =>
        h('li', {}, h('span', { class: `swatch ${s.className}`, 'aria-hidden': 'true' }), s.name),
      ),
    ),
    h('p', { id: `${spec.id}-summary`, class: 'chart-summary' }, spec.summary),
  );
}
