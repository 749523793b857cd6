/**
 * A risk's score over time on its page (GET /v1/risks/{id}/score-history,
 * from its audit entries): riskScore and residualScore as a chart, with its
 * numbers as a table for screen readers. Loaded as its own chunk, beside the
 * page (risk.tsx), and read again when a change of the user's settles.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { Trends, type ScorePoint } from "@riskapi/sdk/trends";
import { api, explain } from "../api";
import { LineChart } from "../charts/line";
import { useOnline } from "../state";
import { useSettled } from "../settled";
import { canRead } from "../offline";
import { isOffline } from "./common";

/** ScoreHistoryChart draws the risk's score history; nothing while offline or before the first score. */
export function ScoreHistoryChart({ riskId }: { riskId: string }) {
  const [points, setPoints] = useState<ScorePoint[] | undefined>();
  const [error, setError] = useState("");
  const online = useOnline();
  const [settled, setSettled] = useState(0);
  useSettled(useCallback(() => setSettled((n) => n + 1), []));
  useEffect(() => {
    if (!canRead()) return;
    let live = true;
    new Trends(api()).scoreHistory(riskId).then(
      (p) => live && (setPoints(p), setError("")),
      (e: unknown) => live && !isOffline(e) && setError(explain(e)),
    );
    return () => void (live = false);
  }, [riskId, online, settled]);
  if (error) return <p class="error" role="alert">Could not load the score history: {error}</p>;
  if (!points || points.length === 0) return null;
  const labels = points.map((p) => p.at.slice(0, 16).replace("T", " "));
  return (
    <section aria-label="Score history" class="score-history">
      <LineChart id="score-history" title="Score history" labels={labels} series={[
        { name: "Risk score", cls: "band-critical", values: points.map((p) => p.riskScore) },
        { name: "Residual score", cls: "series-a", values: points.map((p) => p.residualScore) },
      ]} />
    </section>
  );
}
