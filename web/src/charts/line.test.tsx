// The line chart rendered to SVG markup: a single day of data must stay
// readable, not four dots drawn on one spot.

import { render } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import { LineChart } from "./line";

const four = (v: number[]) => ["Low", "Medium", "High", "Critical"].map((name, i) => ({ name, cls: `band-${name.toLowerCase()}`, values: [v[i]!] }));

describe("LineChart with one day of data", () => {
  it("sets each series' dot apart, each with its value written, around the centred day", () => {
    const html = render(<LineChart id="bands" title="Risks by score band" labels={["2026-12-06"]} series={four([0, 0, 2, 0])} />);
    const dots = [...html.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(dots).toHaveLength(4);
    // No two dots on the same spot, even where the values are equal.
    expect(new Set(dots).size).toBe(4);
    const values = [...html.matchAll(/<text class="value"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(values).toEqual(["0", "0", "2", "0"]);
    // The day's label is centred under the dots, not starting at the centre.
    const day = /<text class="tick" x="([\d.]+)" y="[\d.]+" text-anchor="middle">2026-12-06<\/text>/.exec(html);
    expect(day).not.toBeNull();
    const mid = Number(day![1]);
    expect(Math.min(...dots)).toBeLessThan(mid);
    expect(Math.max(...dots)).toBeGreaterThan(mid);
  });

  it("writes the highest value wholly inside the picture, not cut off at its top", () => {
    const html = render(<LineChart id="score" title="Score history" labels={["2026-12-06"]} series={[{ name: "Score", cls: "series-a", values: [12] }]} />);
    const label = /<text class="value" x="[\d.]+" y="(-?[\d.]+)"[^>]*>12<\/text>/.exec(html);
    expect(label).not.toBeNull();
    // The label's baseline is its y; its 12px text (charts.css, .value) rises above it, and the viewBox starts at 0.
    expect(html).toContain('viewBox="0 0 ');
    expect(Number(label![1]) - 12).toBeGreaterThanOrEqual(0);
  });

  it("draws several days as lines through dots on their own days, without value labels", () => {
    const html = render(<LineChart id="bands" title="t" labels={["2026-12-05", "2026-12-06"]} series={four([0, 0, 2, 0]).map((s) => ({ ...s, values: [1, 1] }))} />);
    expect(html.match(/<polyline /g)).toHaveLength(4);
    expect(html).not.toContain('class="value"');
  });
});
