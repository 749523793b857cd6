/**
 * The heat map (docs/dashboard.md, "Heat map"): the risks of the list's
 * filters counted by likelihood × impact, inherent or residual, each cell a
 * link to the list of exactly those risks.
 */
import "./heatmap.css";
import { useEffect, useState } from "preact/hooks";
import type { Heatmap } from "@riskapi/sdk";
import { api, explain } from "../api";
import { canRead } from "../offline";
import { isOffline, Offline } from "../pages/common";
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
  const [map, setMap] = useState<Heatmap | undefined>();
  const [error, setError] = useState("");
  const [offline, setOffline] = useState(false);
  const online = useOnline();
  const key = viewURL(view);
  useEffect(() => {
    if (!canRead()) return setOffline(true);
    let live = true;
    api().risks.heatmap({ ...apiFilter(view), basis: view.basis }).then(
      (m) => live && (setMap(m), setError(""), setOffline(false)),
      (e: unknown) => live && (isOffline(e) ? setOffline(true) : (setOffline(false), setError(explain(e)))),
    );
    return () => void (live = false);
  }, [key, online]);
  return (
    <section aria-label="Heat map">
      <BasisToggle view={view} />
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

/** HeatmapTable is the 5×5 grid, likelihood from 5 (top) to 1, impact from 1 to 5, each count a link to its risks. */
export function HeatmapTable({ map, view }: { map: Heatmap; view: ListView }) {
  const count = (l: number, i: number) => map.cells.find((c) => c.likelihood === l && c.impact === i)?.count ?? 0;
  const basis = map.basis;
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
                return (
                  <td key={i} class={`cell ${level(l, i)}`}>
                    <a href={cellURL(view, basis, l, i)} aria-label={`Likelihood ${l}, impact ${i}: ${n === 1 ? "1 risk" : `${n} risks`}`}
                      data-cell={`${l}x${i}`}>{n}</a>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">Not assessed ({basis === "residual" ? "no residual likelihood or impact" : "no likelihood or impact"}): {map.unassessed}</p>
    </>
  );
}
