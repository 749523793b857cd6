/**
 * The Trends page (docs/dashboard.md, "Trends"): the register over time from
 * its daily snapshots — risks by score band, what is outside appetite, and
 * overdue reviews and actions. A day the server did not run is a gap in the
 * lines, never a drawn-in value.
 */
import { useEffect, useState } from "preact/hooks";
import { Trends, type TrendPoint, type TrendSeries } from "@riskapi/sdk/trends";
import { api, explain } from "../api";
import { LineChart, type Series } from "../charts/line";
import { withQuery, useQuery, navigate } from "../router";
import { useOnline } from "../state";
import { canRead } from "../offline";
import { isOffline, Offline } from "./common";

type Interval = "day" | "week" | "month";
const INTERVALS: Interval[] = ["day", "week", "month"];
const BANDS = ["low", "medium", "high", "critical"] as const;

/** useTrends loads the series of the interval; undefined while loading. */
export function useTrends(interval: Interval): { series?: TrendSeries; error: string; offline: boolean } {
  const [series, setSeries] = useState<TrendSeries | undefined>();
  const [error, setError] = useState("");
  const [offline, setOffline] = useState(false);
  const online = useOnline();
  useEffect(() => {
    if (!canRead()) return setOffline(true);
    let live = true;
    const days = interval === "day" ? 90 : interval === "week" ? 364 : 1095;
    const to = new Date();
    const from = new Date(to.getTime() - days * 86_400_000);
    new Trends(api()).series({ interval, from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10) }).then(
      (s) => live && (setSeries(s), setError(""), setOffline(false)),
      (e: unknown) => live && (isOffline(e) ? setOffline(true) : setError(explain(e))),
    );
    return () => void (live = false);
  }, [interval, online]);
  return { series, error, offline };
}

/** TrendCharts draws the series' charts: counts by band, and overdue reviews and actions, with outside appetite. */
export function TrendCharts({ series }: { series: TrendSeries }) {
  const points: TrendPoint[] = series.points;
  if (points.length === 0) {
    return <p class="hint" data-testid="trends-empty">No snapshot yet: the first is taken by the server's schedule (every minute by default).</p>;
  }
  const labels = points.map((p) => p.day);
  const bands: Series[] = BANDS.map((b) => ({ name: b[0]!.toUpperCase() + b.slice(1), cls: `band-${b}`, values: points.map((p) => p.byBand[b] ?? 0) }));
  const overdue: Series[] = [
    { name: "Reviews overdue", cls: "series-a", values: points.map((p) => p.reviewsOverdue) },
    { name: "Actions overdue", cls: "series-b", values: points.map((p) => p.actionsOverdue) },
    { name: "Outside appetite", cls: "band-critical", values: points.map((p) => p.outsideAppetite) },
  ];
  const last = points[points.length - 1]!;
  return (
    <>
      <p class="hint" data-testid="trends-as-of">
        Latest point: {last.day}, as of {last.takenAt.slice(11, 16)} UTC (the server's last snapshot; it refreshes today's on each run of its schedule).
      </p>
      <LineChart id="bands" title="Risks by score band" labels={labels} series={bands} />
      <LineChart id="overdue" title="Overdue reviews and actions, and risks outside appetite" labels={labels} series={overdue} />
    </>
  );
}

/** TrendsPage is /trends: the interval's charts. */
export function TrendsPage() {
  const q = useQuery();
  const interval = (INTERVALS as string[]).includes(q.get("interval") ?? "") ? (q.get("interval") as Interval) : "day";
  const { series, error, offline } = useTrends(interval);
  return (
    <section>
      <h1>Trends</h1>
      <p class="hint">One snapshot of the register per day, taken by the server; a week's or a month's point is its last day's.</p>
      <nav class="row tabs" aria-label="Interval">
        {INTERVALS.map((i) => (
          <a key={i} class="tab" href={withQuery("/trends", { interval: i === "day" ? undefined : i })} aria-current={i === interval ? "true" : undefined}
            onClick={(e) => { e.preventDefault(); navigate(withQuery("/trends", { interval: i === "day" ? undefined : i })); }}>
            By {i}
          </a>
        ))}
      </nav>
      {offline ? <Offline what="the trends" /> : error && <p class="error" role="alert">Could not load the trends: {error}</p>}
      {!series && !offline && !error && <p class="loading">Loading…</p>}
      {series && <TrendCharts series={series} />}
    </section>
  );
}
