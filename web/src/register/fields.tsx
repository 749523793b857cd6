/**
 * The register's fields on a risk's page (docs/register.md, "Fields"):
 * treatment, review date, review cadence, the residual assessment with its derived score,
 * and metadata, shown and edited. The edit form keeps them as strings (what
 * the user typed, put back on a refusal); registerChanges turns them into the
 * PATCH, metadata merged key by key (a removed key is sent as "").
 */
import type { Risk, RiskUpdateParams } from "../api";
import { cadence } from "../audit";
import { Field, type FieldErrors } from "../pages/common";
import { isOverdue, REVIEW_CADENCES, TREATMENTS } from "./view";

/** RegisterForm is the register's part of the edit form, as typed. */
export interface RegisterForm {
  treatment: string;
  reviewDate: string;
  /** The review cadence (P1M, P3M, P6M, P1Y), "" for none. */
  reviewEvery: string;
  residualLikelihood: string;
  residualImpact: string;
  /** The metadata as a JSON array of [key, value] rows, in the order shown. */
  metadata: string;
}

/** registerForm is the stored risk's register fields as the form shows them. */
export function registerForm(r: Risk): RegisterForm {
  return {
    treatment: r.treatment ?? "",
    reviewDate: r.reviewDate ?? "",
    reviewEvery: r.reviewEvery ?? "",
    residualLikelihood: r.residualLikelihood === null || r.residualLikelihood === undefined ? "" : String(r.residualLikelihood),
    residualImpact: r.residualImpact === null || r.residualImpact === undefined ? "" : String(r.residualImpact),
    metadata: JSON.stringify(Object.entries(r.metadata ?? {})),
  };
}

/** rows reads the form's metadata rows. */
export function rows(metadata: string): [string, string][] {
  try {
    const v = JSON.parse(metadata) as unknown;
    return Array.isArray(v) ? (v as [string, string][]) : [];
  } catch {
    return [];
  }
}

const num = (s: string) => (s === "" ? null : Number(s));

/**
 * registerChanges is the PATCH of what the user changed: a cleared field is
 * null; metadata gives only the keys changed, a key removed (or renamed
 * from) as "", which the server removes. Rows without a key are ignored.
 */
export function registerChanges(was: RegisterForm, now: RegisterForm): RiskUpdateParams {
  const out: RiskUpdateParams = {};
  if (now.treatment !== was.treatment) out.treatment = (now.treatment || null) as Risk["treatment"];
  if (now.reviewDate !== was.reviewDate) out.reviewDate = now.reviewDate || null;
  if (now.reviewEvery !== was.reviewEvery) out.reviewEvery = (now.reviewEvery || null) as Risk["reviewEvery"];
  if (now.residualLikelihood !== was.residualLikelihood) out.residualLikelihood = num(now.residualLikelihood);
  if (now.residualImpact !== was.residualImpact) out.residualImpact = num(now.residualImpact);
  const before = new Map(rows(was.metadata));
  const after = new Map(rows(now.metadata).filter(([k]) => k.trim() !== "").map(([k, v]) => [k.trim(), v]));
  const meta: Record<string, string> = {};
  for (const [k, v] of after) if (before.get(k) !== v) meta[k] = v;
  for (const k of before.keys()) if (!after.has(k)) meta[k] = "";
  if (Object.keys(meta).length) out.metadata = meta;
  return out;
}

/** residualScore is the product the server will derive, or "" while a factor is missing. */
export function residualScore(f: RegisterForm): string {
  return f.residualLikelihood && f.residualImpact ? String(Number(f.residualLikelihood) * Number(f.residualImpact)) : "";
}

/** RegisterFacts shows the register's fields of the stored risk; an overdue review is marked. */
export function RegisterFacts({ risk }: { risk: Risk }) {
  const meta = Object.entries(risk.metadata ?? {});
  return (
    <>
      <div><dt>Residual score</dt><dd>{risk.residualScore ?? "not assessed"}</dd></div>
      <div><dt>Treatment</dt><dd>{risk.treatment ?? "none"}</dd></div>
      <div class={isOverdue(risk) ? "overdue" : undefined}>
        <dt>Review date</dt>
        <dd>{risk.reviewDate ?? "none"}{isOverdue(risk) && <> <span class="badge overdue">overdue</span></>}</dd>
      </div>
      {meta.length > 0 && (
        <div><dt>Metadata</dt><dd><ul class="metadata">{meta.map(([k, v]) => <li key={k}><code>{k}</code>: {v}</li>)}</ul></dd></div>
      )}
    </>
  );
}

const FACTOR_OPTIONS = ["", "1", "2", "3", "4", "5"];

/** RegisterFields are the register's inputs of the edit form. */
export function RegisterFields(props: { f: RegisterForm; set: (k: keyof RegisterForm) => (v: string) => void; errors: FieldErrors }) {
  const { f, set, errors } = props;
  const factor = (k: "residualLikelihood" | "residualImpact", label: string) => (
    <Field label={label} name={k} errors={errors}>
      {(a) => (
        <select value={f[k]} onChange={(e) => set(k)(e.currentTarget.value)} {...a}>
          {FACTOR_OPTIONS.map((v) => <option key={v} value={v}>{v || "not assessed"}</option>)}
        </select>
      )}
    </Field>
  );
  return (
    <>
      <Field label="Treatment" name="treatment" errors={errors}>
        {(a) => (
          <select value={f.treatment} onChange={(e) => set("treatment")(e.currentTarget.value)} {...a}>
            <option value="">none</option>
            {TREATMENTS.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        )}
      </Field>
      <Field label="Review date" name="reviewDate" errors={errors}>
        {(a) => <input type="date" value={f.reviewDate} onInput={(e) => set("reviewDate")(e.currentTarget.value)} {...a} />}
      </Field>
      <Field label="Review every" name="reviewEvery" errors={errors}>
        {(a) => (
          <select value={f.reviewEvery} onChange={(e) => set("reviewEvery")(e.currentTarget.value)} {...a}>
            <option value="">no cadence</option>
            {REVIEW_CADENCES.map((c) => <option key={c} value={c}>{cadence(c)}</option>)}
          </select>
        )}
      </Field>
      {factor("residualLikelihood", "Residual likelihood")}
      {factor("residualImpact", "Residual impact")}
      <p class="derived">Residual score: <output>{residualScore(f) || "not assessed"}</output></p>
      <MetadataEditor value={f.metadata} onChange={set("metadata")} error={errors.metadata} />
    </>
  );
}

function MetadataEditor(props: { value: string; onChange: (v: string) => void; error: string | undefined }) {
  const list = rows(props.value);
  const put = (next: [string, string][]) => props.onChange(JSON.stringify(next));
  const edit = (i: number, part: 0 | 1) => (e: Event) => {
    const next = list.map((r) => [...r] as [string, string]);
    next[i]![part] = (e.currentTarget as HTMLInputElement).value;
    put(next);
  };
  return (
    <fieldset class="metadata-editor" aria-describedby={props.error ? "err-metadata" : undefined}>
      <legend>Metadata</legend>
      {list.map(([k, v], i) => (
        <div class="row" key={i}>
          <label>Key {i + 1}<input value={k} maxLength={40} pattern="[A-Za-z0-9_.\-]+" onInput={edit(i, 0)} /></label>
          <label>Value {i + 1}<input value={v} maxLength={500} onInput={edit(i, 1)} /></label>
          <button type="button" class="secondary" onClick={() => put(list.filter((_, j) => j !== i))}>Remove key {i + 1}</button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={() => put([...list, ["", ""]])}>Add metadata</button>
      {props.error && <span class="field-error" id="err-metadata">{props.error}</span>}
    </fieldset>
  );
}
