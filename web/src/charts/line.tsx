/**
 * A line chart in plain SVG (docs/dashboard.md, "Trends"): no charting library,
 * so the chunk that draws it stays small. Every chart comes with its numbers as
 * a table (in a disclosure), which is what a screen reader reads: the SVG is one
 * image with a text summary.
 */
import "./charts.css";

/** Series is one line: its name and one value per label (null: no point, a gap). */
export interface Series {
  name: string;
  values: (number | null)[];
  /** A CSS class giving its colour (band-low, …). */
  cls: string;
}

const W = 640;
const H = 220;
const PAD = { l: 36, r: 12, t: 12, b: 28 };
/** Between the dots of a single day's series (see LineChart). */
const SPREAD = 40;
/** A value written above its dot: its baseline this far above the dot's centre, its text this tall (charts.css, .value). */
const VALUE_GAP = 9;
const VALUE_SIZE = 12;

/** LineChart draws series over labels (dates, oldest first), with a legend and a data table. */
export function LineChart(props: { id: string; title: string; labels: string[]; series: Series[]; summary?: string }) {
  const { labels, series } = props;
  const max = Math.max(1, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  const x = (i: number) => PAD.l + (labels.length <= 1 ? (W - PAD.l - PAD.r) / 2 : (i * (W - PAD.l - PAD.r)) / (labels.length - 1));
  // One day of data: every series' dot would sit on the same spot (often the
  // same value, 0), one over the other. Instead each series gets its own place
  // side by side around the centre, with its value written above its dot.
  const single = labels.length === 1;
  const dx = (k: number) => (single ? (k - (series.length - 1) / 2) * SPREAD : 0);
  // Room above the top for the value written over the highest dot, inside the viewBox.
  const top = single ? PAD.t + VALUE_GAP + VALUE_SIZE : PAD.t;
  const y = (v: number) => top + (H - top - PAD.b) * (1 - v / max);
  const ticks = [0, Math.round(max / 2), max].filter((v, i, a) => a.indexOf(v) === i);
  const last = labels.length - 1;
  const summary = props.summary ??
    (last < 0 ? "No data yet." : series.map((s) => `${s.name}: ${s.values[last] ?? "no data"}`).join(", ") + ` on ${labels[last]}.`);
  return (
    <figure class="chart" aria-labelledby={`${props.id}-title`}>
      <figcaption id={`${props.id}-title`}>{props.title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${props.id}-title ${props.id}-summary`} data-chart={props.id}>
        {ticks.map((t) => (
          <g key={t}>
            <line class="grid" x1={PAD.l} x2={W - PAD.r} y1={y(t)} y2={y(t)} />
            <text class="tick" x={PAD.l - 6} y={y(t) + 4} text-anchor="end">{t}</text>
          </g>
        ))}
        {labels.length > 0 && <text class="tick" x={x(0)} y={H - 8} text-anchor={single ? "middle" : "start"}>{labels[0]}</text>}
        {labels.length > 1 && <text class="tick" x={x(last)} y={H - 8} text-anchor="end">{labels[last]}</text>}
        {series.map((s, k) => (
          <g key={s.name} class={`line ${s.cls}`}>
            {!single && segments(s.values).map((seg, k) => (
              <polyline key={k} points={seg.map((i) => `${x(i)},${y(s.values[i]!)}`).join(" ")} />
            ))}
            {s.values.map((v, i) => v === null ? null : <circle key={i} cx={x(i) + dx(k)} cy={y(v)} r={single ? 5 : 3} />)}
            {single && s.values[0] != null && (
              <text class="value" x={x(0) + dx(k)} y={y(s.values[0]) - VALUE_GAP} text-anchor="middle">{s.values[0]}</text>
            )}
          </g>
        ))}
      </svg>
      <p id={`${props.id}-summary`} class="chart-summary">{summary}</p>
      <ul class="legend" aria-hidden="true">
        {series.map((s) => <li key={s.name}><span class={`swatch ${s.cls}`} />{s.name}</li>)}
      </ul>
      <details class="chart-data">
        <summary>{props.title}: the numbers</summary>
        <table>
          <thead><tr><th scope="col">Day</th>{series.map((s) => <th key={s.name} scope="col">{s.name}</th>)}</tr></thead>
          <tbody>
            {labels.map((l, i) => (
              <tr key={l}><th scope="row">{l}</th>{series.map((s) => <td key={s.name}>{s.values[i] ?? "–"}</td>)}</tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** segments splits the indexes of values into runs without a gap: a line never bridges a day with no data. */
function segments(values: (number | null)[]): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (cur.length) out.push(cur);
      cur = [];
    } else cur.push(i);
  });
  if (cur.length) out.push(cur);
  return out;
}
