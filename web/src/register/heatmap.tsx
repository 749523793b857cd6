/**
 * The heat map (docs/dashboard.md, "Heat map"): the risks of the list's
 * filters counted by likelihood × impact, inherent or residual, each cell a
 * link to the list of exactly those risks; with a day picked, where risks
 * moved from since then, on the cells and as a table.
 */
import "./heatmap.css";
import { useEffect, useState } from "preact/hooks";
import type { Heatmap, HeatmapMove } from "@riskapi/sdk";
import { api, explain } from "../api";
import { canRead } from "../offline";
import { isOffline, Offline } from "../pages/common";
import { navigate } from "../router";
import { useOnline } from "../state";
import { apiFilter, cellURL, viewURL, type Basis, type ListView } from "./view";

const FACTORS = [1, 2, 3, 4, 5];

/** level is the cell's band by likelihood × impact, for its colour: low, medium, high, critical. */
export function level(likelihood: number, impact: number): string {
  const s = likelihood * impact;
  return s >= 15 ? "critical" : s >= 8 ? "high" : s >= 4 ? "medium" : "low";
}

/**
 * HeatmapView loads and shows the heat map of the view's filters; offline it
 * says so at once (instead of the SDK's retries behind nothing) and loads the
 * map on reconnecting.
 */
export function HeatmapView({ view }: { view: ListView }) {
  // The map, or the refusal, with the address it answers: one of another
  // address (the basis, the filters or movedSince since changed) is not shown
  // as this one's.
  const [answer, setAnswer] = useState<{ key: string; map: Heatmap } | undefined>();
  const [failed, setFailed] = useState<{ key: string; error: string } | undefined>();
  const [offline, setOffline] = useState(false);
  const online = useOnline();
  const key = viewURL(view);
  useEffect(() => {
    if (!canRead()) return setOffline(true);
    let live = true;
    api().risks.heatmap({ ...apiFilter(view), basis: view.basis, ...(view.movedSince ? { movedSince: view.movedSince } : {}) }).then(
      (m) => live && (setAnswer({ key, map: m }), setFailed(undefined), setOffline(false)),
      // Refused (a movedSince out of range, say): the error stands alone, no
      // grid or moves of an earlier answer beside it as if they were current.
      (e: unknown) => live && (isOffline(e) ? setOffline(true) : (setOffline(false), setAnswer(undefined), setFailed({ key, error: explain(e) }))),
    );
    return () => void (live = false);
  }, [key, online]);
  const map = answer?.key === key ? answer.map : undefined;
  const error = failed?.key === key ? failed.error : "";
  return (
    <section aria-label="Heat map">
      <BasisToggle view={view} />
      <MovedSince view={view} />
      {offline ? <Offline what="the heat map" /> : error && <p class="error" role="alert">Could not load the heat map: {error}</p>}
      {!map && !offline && !error && <p class="loading">Loading…</p>}
      {map && <HeatmapTable map={map} view={view} />}
    </section>
  );
}

function BasisToggle({ view }: { view: ListView }) {
  const link = (b: Basis, label: string) => (
    <a href={viewURL({ ...view, basis: b, cursors: [] })} aria-current={view.basis === b ? "true" : undefined} class="tab">{label}</a>
  );
  return (
    <nav class="row tabs" aria-label="Heat map basis">
      {link("inherent", "Inherent")}
      {link("residual", "Residual")}
    </nav>
  );
}

/** MovedSince picks the day the heat map shows moves since (in the URL, so a reload or a link keeps it). */
function MovedSince({ view }: { view: ListView }) {
  const go = (d: string) => navigate(viewURL({ ...view, movedSince: d, cursors: [] }));
  return (
    <form class="row moved-since" onSubmit={(e) => e.preventDefault()}>
      <label>Show moves since <input type="date" name="movedSince" value={view.movedSince} max={new Date().toISOString().slice(0, 10)}
        onChange={(e) => go((e.target as HTMLInputElement).value)} /></label>
      {view.movedSince && <button type="button" class="secondary" onClick={() => go("")}>Hide moves</button>}
    </form>
  );
}

const place = (c: HeatmapMove["from"], none: string) => (c ? `likelihood ${c.likelihood}, impact ${c.impact}` : none);
const risks = (n: number) => (n === 1 ? "1 risk" : `${n} risks`);

/** HeatmapTable is the 5×5 grid, likelihood from 5 (top) to 1, impact from 1 to 5, each count a link to its risks. */
export function HeatmapTable({ map, view }: { map: Heatmap; view: ListView }) {
  const count = (l: number, i: number) => map.cells.find((c) => c.likelihood === l && c.impact === i)?.count ?? 0;
  const basis = map.basis;
  const moves = map.moves ?? [];
  // Per cell: how many risks arrived in it, and how many left it, since movedSince.
  const flow = (l: number, i: number) => ({
    in: moves.filter((m) => m.to?.likelihood === l && m.to.impact === i).reduce((n, m) => n + m.count, 0),
    out: moves.filter((m) => m.from?.likelihood === l && m.from.impact === i).reduce((n, m) => n + m.count, 0),
  });
  return (
    <>
      <table class="heatmap">
        <caption>{basis === "residual" ? "Residual" : "Inherent"} risks by likelihood and impact</caption>
        <thead>
          <tr><td></td>{FACTORS.map((i) => <th key={i} scope="col">Impact {i}</th>)}</tr>
        </thead>
        <tbody>
          {[...FACTORS].reverse().map((l) => (
            <tr key={l}>
              <th scope="row">Likelihood {l}</th>
              {FACTORS.map((i) => {
                const n = count(l, i);
                const f = flow(l, i);
                const moved = map.movedSince && (f.in || f.out) ? `; since ${map.movedSince}, ${f.in} came in, ${f.out} left` : "";
                return (
                  <td key={i} class={`cell ${level(l, i)}`}>
                    <a href={cellURL(view, basis, l, i)} aria-label={`Likelihood ${l}, impact ${i}: ${risks(n)}${moved}`}
                      data-cell={`${l}x${i}`}>{n}</a>
                    {/* Said in the link's label; beside it, so the link's text stays its count. */}
                    {moved && <span class="flow" aria-hidden="true" data-flow={`${l}x${i}`}>{f.in ? `+${f.in}` : ""}{f.in && f.out ? " " : ""}{f.out ? `−${f.out}` : ""}</span>}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">Not assessed ({basis === "residual" ? "no residual likelihood or impact" : "no likelihood or impact"}): {map.unassessed}</p>
      {map.movedSince && <MovesTable since={map.movedSince} moves={moves} />}
    </>
  );
}

/** MovesTable lists where risks moved from since the day, one row per (from, to): the map's moves as text. */
function MovesTable({ since, moves }: { since: string; moves: HeatmapMove[] }) {
  if (moves.length === 0) return <p data-testid="no-moves">No risk moved since {since}.</p>;
  return (
    <table class="moves">
      <caption>Where risks moved from since {since} (UTC)</caption>
      <thead><tr><th scope="col">From</th><th scope="col">To</th><th scope="col">Risks</th></tr></thead>
      <tbody>
        {moves.map((m) => (
          <tr key={`${place(m.from, "")}>${place(m.to, "")}`}>
            <td>{place(m.from, "not on the map (new or not assessed)")}</td>
            <td>{place(m.to, "not assessed")}</td>
            <td>{m.count}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
