/**
 * The console's capacity charts: small SVG line charts drawn by hand from
 * the director's samples, and the formats of their figures.
 *
 * A chart spans the window asked for (an hour, a day, a week) back from
 * now, or from the first sample when the samples begin later (a realm
 * younger than the window), and says which. At most one point is drawn
 * per column of the plot (the highest sample falling there: a capacity
 * chart must not hide a peak), and the line breaks where the director
 * wrote no sample for three of its intervals (it was down).
 */

import type { Sample, Samples } from "@leyworks/ley-sdk";

/** One line of a chart. */
export interface Line {
  name: string;
  value: (s: Sample) => number;
}

/** What a chart shows. */
export interface Chart {
  key: string;
  title: string;
  unit: string;
  lines: Line[];
  format: (v: number) => string;
  /** The unit the scale's top is a round number of (1 unless set: the RSS chart's is a MiB). */
  round?: number;
}

const SVG = "http://www.w3.org/2000/svg";
/** The plot's viewBox: columns across, units up. */
const W = 600;
const H = 140;

/** mib formats bytes as MiB (GiB past one). */
export function mib(bytes: number): string {
  return bytes >= 1 << 30 ? `${(bytes / (1 << 30)).toFixed(2)} GiB` : `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}

/** micros formats microseconds (ms past one). */
export function micros(us: number): string {
  return us >= 1000 ? `${(us / 1000).toFixed(us >= 10_000 ? 0 : 2)} ms` : `${Math.round(us)} µs`;
}

/** nice returns the smallest of 1, 2, 5 times a power of ten that is at least v (1 for v <= 0). */
export function nice(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function span(text: string, cls: string): HTMLSpanElement {
  const e = document.createElement("span");
  e.className = cls;
  e.textContent = text;
  return e;
}

function clock(ms: number, withDay: boolean): string {
  const d = new Date(ms);
  const hm = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return withDay ? `${d.toLocaleDateString([], { weekday: "short", day: "numeric" })} ${hm}` : hm;
}

/** A point of a line: its column, value, and whether a gap comes before it. */
interface Point {
  col: number;
  v: number;
  gap: boolean;
}

/**
 * points reduces the samples to at most one point per column of the
 * plot: the highest value in it. times are the samples' times in ms.
 */
function points(samples: Sample[], times: number[], value: (s: Sample) => number, t0: number, t1: number, gapMs: number): Point[] {
  const out: Point[] = [];
  let lastT = -Infinity;
  samples.forEach((s, i) => {
    const t = times[i]!;
    if (t < t0) return;
    const col = t1 > t0 ? Math.min(W, Math.max(0, Math.round(((t - t0) / (t1 - t0)) * W))) : W;
    const v = value(s);
    const gap = t - lastT > gapMs && out.length > 0;
    lastT = t;
    const last = out[out.length - 1];
    if (last !== undefined && last.col === col && !gap) last.v = Math.max(last.v, v);
    else out.push({ col, v, gap });
  });
  return out;
}

/** pathOf draws the points as one path, broken (a new M) at each gap. */
function pathOf(pts: Point[], ymax: number): string {
  const y = (v: number) => (H - (v / ymax) * (H - 4) - 2).toFixed(1);
  return pts.map((p, i) => `${i === 0 || p.gap ? "M" : "L"}${p.col} ${y(p.v)}`).join(" ");
}

/**
 * drawChart makes the figure of chart c over samples s: the window of
 * since seconds back from now (ms since the epoch).
 */
export function drawChart(c: Chart, s: Samples, since: number, now: number): HTMLElement {
  const fig = document.createElement("figure");
  fig.className = "chart";
  fig.dataset["chart"] = c.key;
  const times = s.samples.map((x) => Date.parse(x.at));
  const windowStart = now - since * 1000;
  const first = times.find((t) => t >= windowStart);
  const t0 = first === undefined ? windowStart : Math.max(windowStart, Math.min(first, now - 60_000));
  const gapMs = s.every_s > 0 ? 3 * s.every_s * 1000 : Infinity;
  const lines = c.lines.map((l) => points(s.samples, times, l.value, t0, now, gapMs));
  let max = 0;
  for (const pts of lines) for (const p of pts) max = Math.max(max, p.v);
  const round = c.round ?? 1;
  const ymax = nice((max * 1.1) / round) * round;

  const cap = document.createElement("figcaption");
  cap.append(span(c.title, "title"));
  const latest = s.samples[s.samples.length - 1];
  if (latest !== undefined) {
    cap.append(span(c.lines.map((l) => (c.lines.length > 1 ? `${l.name} ${c.format(l.value(latest))}` : c.format(l.value(latest)))).join(" · "), "now"));
    cap.append(span(`peak ${c.format(max)}`, "muted"));
  }
  if (c.unit !== "") cap.append(span(c.unit, "muted"));

  const plot = document.createElement("div");
  plot.className = "plot";
  plot.append(span(c.format(ymax), "ymax"), span(c.format(0), "ymin"));
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", role: "img", "aria-label": `${c.title} over the window` });
  for (const f of [0.25, 0.5, 0.75]) chart.append(svg("line", { class: "grid", x1: 0, x2: W, y1: H * f, y2: H * f, "vector-effect": "non-scaling-stroke" }));
  lines.forEach((pts, i) => {
    if (pts.length === 0) return;
    const d = pathOf(pts, ymax);
    if (i === 0 && pts.length > 1 && !pts.some((p) => p.gap)) {
      // The first line's area, filled faintly under it (not across a gap: no fill where no sample is).
      const firstP = pts[0]!;
      const lastP = pts[pts.length - 1]!;
      chart.append(svg("path", { class: "area", d: `${d} L${lastP.col} ${H} L${firstP.col} ${H} Z` }));
    }
    const path = svg("path", { class: `line l${i}`, d, "vector-effect": "non-scaling-stroke", "data-line": c.lines[i]!.name, "data-points": pts.length });
    chart.append(path);
    if (pts.length === 1) chart.append(svg("circle", { class: `dot l${i}`, cx: pts[0]!.col, cy: H - (pts[0]!.v / ymax) * (H - 4) - 2, r: 3 }));
  });
  plot.append(chart);
  fig.dataset["points"] = String(lines[0]?.length ?? 0);

  const axis = document.createElement("div");
  axis.className = "xaxis";
  const withDay = now - t0 > 20 * 3600_000;
  axis.append(span(clock(t0, withDay), ""), span("now", ""));
  fig.append(cap, plot, axis);
  if (c.lines.length > 1) {
    const legend = document.createElement("div");
    legend.className = "legend";
    c.lines.forEach((l, i) => legend.append(span(l.name, `key l${i}`)));
    fig.append(legend);
  }
  return fig;
}
