/**
 * The Report page (docs/dashboard.md, "Report"): what a risk manager hands
 * upward, laid out to print (the browser's print to PDF): the heat map, the top
 * risks, what is overdue, and the trends. Print styles (report.css) hide the
 * navigation and the dashboard's controls.
 */
import "./report.css";
import { useEffect, useState } from "preact/hooks";
import type { Heatmap, Risk } from "@riskapi/sdk";
import { api, explain } from "../api";
import { today } from "../day";
import { HeatmapTable } from "../register/heatmap";
import { EMPTY_VIEW } from "../register/view";
import { TrendCharts, useTrends } from "./trends";

interface Data {
  map: Heatmap;
  top: Risk[];
  overdue: Risk[];
}

/** ReportPage is /report. */
export function ReportPage() {
  const [data, setData] = useState<Data | undefined>();
  const [error, setError] = useState("");
  const { series, error: trendsError } = useTrends("week");
  useEffect(() => {
    let live = true;
    Promise.all([
      api().risks.heatmap({}),
      api().risks.listPage({ sort: "-riskScore", limit: 10, status: ["open", "mitigated"] }),
      api().risks.listPage({ reviewBefore: today(), status: ["open", "mitigated"], sort: "reviewDate", limit: 50 }),
    ]).then(
      ([map, top, overdue]) => live && setData({ map, top: top.data, overdue: overdue.data }),
      (e: unknown) => live && setError(explain(e)),
    );
    return () => void (live = false);
  }, []);
  const generated = new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC";
  return (
    <article class="report">
      <div class="row no-print">
        <button type="button" onClick={() => print()}>Print or save as PDF</button>
      </div>
      <h1>Risk report</h1>
      <p class="hint">Generated {generated}.</p>
      {error && <p class="error" role="alert">Could not load the report: {error}</p>}
      {!data && !error && <p class="loading">Loading…</p>}
      {data && (
        <>
          <section aria-labelledby="report-heatmap">
            <h2 id="report-heatmap">Heat map</h2>
            <HeatmapTable map={data.map} view={EMPTY_VIEW} />
          </section>
          <section aria-labelledby="report-top">
            <h2 id="report-top">Top risks</h2>
            <RiskTable risks={data.top} empty="No open risk." date={false} />
          </section>
          <section aria-labelledby="report-overdue">
            <h2 id="report-overdue">Overdue reviews</h2>
            <RiskTable risks={data.overdue} empty="No review is overdue." date />
          </section>
        </>
      )}
      <section aria-labelledby="report-trends">
        <h2 id="report-trends">Trends (by week)</h2>
        {trendsError && <p class="error" role="alert">Could not load the trends: {trendsError}</p>}
        {series ? <TrendCharts series={series} /> : !trendsError && <p class="loading">Loading…</p>}
      </section>
    </article>
  );
}

function RiskTable(props: { risks: Risk[]; empty: string; date: boolean }) {
  if (props.risks.length === 0) return <p>{props.empty}</p>;
  return (
    <table>
      <thead>
        <tr><th scope="col">Risk</th><th scope="col">Category</th><th scope="col">Score</th><th scope="col">Status</th>
          {props.date && <th scope="col">Review was due</th>}</tr>
      </thead>
      <tbody>
        {props.risks.map((r) => (
          <tr key={r.id}>
            <td><a href={`/risks/${encodeURIComponent(r.id)}`}>{r.title}</a></td>
            <td>{r.category || "–"}</td>
            <td>{r.riskScore ?? "–"}</td>
            <td>{r.status}</td>
            {props.date && <td>{r.reviewDate}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
