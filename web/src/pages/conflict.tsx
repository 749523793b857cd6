/**
 * A change in conflict, on its risk's page: an edit of the user's met a newer
 * version that changed the same fields (outbox/merge.ts). Both values side by
 * side, and the user chooses; nothing is overwritten until they do. It lives
 * in the outbox like any queued change, so it is here again after a reload.
 */
import type { Risk } from "../api";
import { cadence } from "../audit";
import type { Change, Fields } from "../outbox/change";
import { metadataClash } from "../outbox/merge";
import { ownerName } from "./common";
import { outbox } from "../state";

/** The risk edit form's fields by JSON name and label, in the form's order: a conflict and a kept-aside edit name fields by them. */
export const EDIT_FIELDS: [string, string][] = [
  ["title", "Title"], ["description", "Description"], ["category", "Category"], ["owner", "Owner"], ["likelihood", "Likelihood"],
  ["impact", "Impact"], ["status", "Status"], ["treatment", "Treatment"], ["reviewDate", "Review date"], ["reviewEvery", "Review every"],
  ["residualLikelihood", "Residual likelihood"], ["residualImpact", "Residual impact"], ["metadata", "Metadata"],
];

/** The labels a conflict names fields by: the edit form's, and the score it derives. */
const LABELS: Record<string, string> = { ...Object.fromEntries(EDIT_FIELDS), riskScore: "Score" };

/** Conflicts lists the signed-in user's conflicts on this risk; onResolved re-reads the risk. */
export function Conflicts({ risk, changes, onResolved }: { risk: Risk; changes: Change[]; onResolved: () => void }) {
  const mine = changes.filter((c) => c.state === "conflict" && c.conflict && c.path === `/risks/${risk.id}`);
  return <>{mine.map((c) => <ConflictBox key={c.key} c={c} onResolved={onResolved} />)}</>;
}

function ConflictBox({ c, onResolved }: { c: Change; onResolved: () => void }) {
  const conflict = c.conflict!;
  const sent = (c.body?.kind === "json" ? c.body.json : {}) as Fields;
  // Of metadata, only the keys both changed are in conflict; the edit's other keys wait with it, as its other fields do.
  const meta = (sent.metadata ?? {}) as Record<string, string>;
  const metaClash = Object.keys(meta).filter((k) => metadataClash({ [k]: meta[k] }, c.base?.metadata, conflict.theirs.metadata));
  const metaOthers = conflict.fields.includes("metadata") ? Object.keys(meta).filter((k) => !metaClash.includes(k)) : [];
  const mine: Fields = "metadata" in sent && conflict.fields.includes("metadata") ? { ...sent, metadata: Object.fromEntries(metaClash.map((k) => [k, meta[k]])) } : sent;
  const others = [...Object.keys(sent).filter((k) => !conflict.fields.includes(k)).map((k) => LABELS[k] ?? k), ...metaOthers.map((k) => `metadata key ${k}`)];
  const choose = (keep: "mine" | "theirs") => () => void outbox().resolve(c.key, keep).then(onResolved);
  const id = `conflict-${c.key}`;
  return (
    <section class="conflict" role="region" aria-labelledby={id}>
      <h2 id={id}>Conflict</h2>
      <p>
        {/* "A newer save", not "someone else's": it may be this user's own, from another tab; History says whose. */}
        Your edit ({new Date(c.createdAt).toLocaleString()}) and a newer save of this risk (version {conflict.version}) both changed{" "}
        {conflict.fields.map((k) => LABELS[k] ?? k).join(", ")}. Nothing was overwritten: choose which to keep.
        {others.length > 0 && ` Your change of ${others.join(", ")} waits with it, and is sent whichever you choose.`}
      </p>
      <table>
        <thead><tr><th scope="col">Field</th><th scope="col">Mine</th><th scope="col">Theirs (version {conflict.version})</th></tr></thead>
        <tbody>
          {conflict.fields.map((k) => (
            <tr key={k}><th scope="row">{LABELS[k] ?? k}</th><td data-side="mine">{show(k, mine[k])}</td><td data-side="theirs">{show(k, theirs(k, mine[k], conflict.theirs[k]))}</td></tr>
          ))}
        </tbody>
      </table>
      <div class="row">
        <button type="button" onClick={choose("mine")}>Keep mine</button>
        <button type="button" class="secondary" onClick={choose("theirs")}>Keep theirs</button>
      </div>
    </section>
  );
}

/** The score's factors are "not assessed" when unset; any other field is "none", as the risk's page says. */
const FACTORS = new Set(["likelihood", "impact", "residualLikelihood", "residualImpact", "riskScore"]);

function show(k: string, v: unknown): string {
  if (v === null || v === undefined) return FACTORS.has(k) ? "not assessed" : "none";
  if (k === "metadata" && typeof v === "object") {
    const pairs = Object.entries(v as Record<string, unknown>);
    return pairs.length ? pairs.map(([mk, mv]) => `${mk}: ${mv === null || mv === undefined || mv === "" ? "none" : String(mv)}`).join(", ") : "none";
  }
  if (k === "owner") return ownerName(v) || "none";
  if (k === "reviewEvery" && typeof v === "string") return cadence(v);
  if (typeof v === "object") return JSON.stringify(v);
  return v === "" ? "(empty)" : String(v);
}

/**
 * theirs is the stored value to set beside mine. An edit's metadata is a merge
 * patch of the keys it sets (docs/register.md), so only those keys are compared:
 * the stored keys it leaves alone stay whichever side is kept.
 */
function theirs(k: string, mine: unknown, stored: unknown): unknown {
  if (k !== "metadata" || typeof mine !== "object" || mine === null) return stored;
  const have = (stored ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.keys(mine).map((mk) => [mk, have[mk] ?? null]));
}
