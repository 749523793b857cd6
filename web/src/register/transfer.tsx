/**
 * Export and import of the register (docs/dashboard.md, "Export and
 * import"). Export is a download of the list's current filter and sort,
 * straight from /v1 with the session cookie. Import checks the CSV first
 * with a dry run (a read-only call, nothing written) and shows the report or
 * every bad row; "Import" then queues the upload in the outbox like any
 * change: keyed once, carrying its author, sent until it settles, so a
 * repeated click or a reload never imports twice.
 */
import "./transfer.css";
import { riskQuery, type ImportReport } from "@riskapi/sdk";
import { useRef, useState } from "preact/hooks";
import { api, explain, RiskApiError } from "../api";
import { outbox, useChanges } from "../state";
import { mode, MODE_HEADER } from "../mode";
import { apiFilter, type ListView } from "./view";

/** exportURL is the /v1 download of the view's risks in format. */
export function exportURL(view: ListView, format: "csv" | "ndjson"): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(riskQuery({ ...apiFilter(view), format, ...(view.sort ? { sort: view.sort } : {}) }))) {
    if (v !== undefined) q.set(k, String(v));
  }
  return `/v1/risks/export?${q}`;
}

/**
 * ExportLinks downloads the risks the list's filters select, as CSV or NDJSON.
 * A link sends no Riskapi-Mode header, so with Test data on it would download
 * live risks: the sandbox's export is fetched with the header and saved from
 * memory instead (a sandbox is small; live exports stay a streamed download).
 */
export function ExportLinks({ view }: { view: ListView }) {
  const [note, setNote] = useState("");
  const link = (format: "csv" | "ndjson") => {
    const href = exportURL(view, format);
    const name = `risks.${format}`;
    const fromSandbox = (e: MouseEvent) => {
      if (mode() !== "test") return;
      e.preventDefault();
      setNote("");
      fetch(href, { headers: { [MODE_HEADER]: "test" }, credentials: "same-origin" })
        .then((res) => (res.ok ? res.blob() : Promise.reject(new Error(`the server answered ${res.status}`))))
        .then((blob) => {
          const a = document.createElement("a");
          a.href = URL.createObjectURL(blob);
          a.download = name;
          a.click();
          setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
        })
        .catch((err: unknown) => setNote(`Could not export: ${err instanceof Error ? err.message : String(err)}`));
    };
    return <a href={href} download={name} onClick={fromSandbox}>{format.toUpperCase()}</a>;
  };
  return (
    <p class="row export">
      Export these risks:
      {link("csv")}
      {link("ndjson")}
      {note && <span class="error" role="alert">{note}</span>}
    </p>
  );
}

/** A bad row of an import, as the server names it. */
export interface RowError {
  row?: number | undefined;
  field: string;
  detail: string;
}

/** What a dry run or an import answered: the counts, or the bad rows, or why it failed. */
export type Outcome = { report: ImportReport } | { rows: RowError[]; detail: string } | { error: string };

/** ImportReportView says what an import did or would do, and lists every bad row. */
export function ImportReportView({ outcome, dryRun }: { outcome: Outcome; dryRun: boolean }) {
  if ("report" in outcome) {
    const r = outcome.report;
    // A file with the header alone: the server answers 201 with every count 0.
    if (isEmptyReport(r)) {
      return <p class="report" role="status">{dryRun ? "The file has no rows under its header: there is nothing to import." : "The file had no rows: nothing was imported."}</p>;
    }
    return (
      <p class="report" role="status">
        {dryRun ? "Would create" : "Created"} {r.created}, {dryRun ? "update" : "updated"} {r.updated}, {r.unchanged} unchanged.
        {dryRun && " Nothing was written yet."}
      </p>
    );
  }
  if ("error" in outcome) return <p class="error" role="alert">{outcome.error}</p>;
  return (
    <div class="report error-report" role="alert">
      <p>{dryRun ? "Nothing would be imported" : "Nothing was imported"}: {outcome.detail}</p>
      <table>
        <thead><tr><th scope="col">Row</th><th scope="col">Field</th><th scope="col">Problem</th></tr></thead>
        <tbody>
          {outcome.rows.map((e, i) => (
            <tr key={i}><td>{e.row ?? ""}</td><td>{e.field}</td><td>{e.detail}</td></tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** isEmptyReport: the file named no risk at all (its header was its only row). */
export function isEmptyReport(r: ImportReport): boolean {
  return r.created + r.updated + r.unchanged === 0;
}

/** outcomeOf turns a refusal of the server into the rows it names. */
export function outcomeOf(err: unknown): Outcome {
  if (err instanceof RiskApiError && err.errors.length) return { rows: err.errors, detail: err.detail };
  return { error: explain(err) };
}

/** ImportForm: pick a CSV, check it (dry run), then import it through the outbox. */
export function ImportForm() {
  const [file, setFile] = useState<File | null>(null);
  const [checked, setChecked] = useState<Outcome | undefined>();
  const [queued, setQueued] = useState<string | undefined>();
  const queuedFile = useRef<File | null>(null);
  const { changes } = useChanges();
  const input = useRef<HTMLInputElement>(null);

  // The file picked now: a check's answer counts only for the file it checked.
  const picked = useRef<File | null>(null);
  picked.current = file;
  const check = async (e: Event) => {
    e.preventDefault();
    if (!file) return;
    setChecked(undefined);
    setQueued(undefined);
    const o = await api().risks.import({ file, filename: file.name, dryRun: true }).then((report): Outcome => ({ report }), outcomeOf);
    // Another file picked while this one was checked: its answer would enable Import for a file nobody checked.
    if (picked.current === file) setChecked(o);
  };
  const doImport = async () => {
    // One file, one change: a second click (before the button is re-rendered disabled) does nothing.
    if (!file || queuedFile.current === file) return;
    queuedFile.current = file;
    {
      const c = await outbox().enqueue({
        method: "POST", path: "/risks/import", body: { kind: "file", file, filename: file.name, fields: {} }, label: `Import “${file.name}”`,
      });
      setQueued(c.key);
      setFile(null);
      setChecked(undefined);
      if (input.current) input.current.value = "";
    }
  };
  const sent = queued ? changes.find((c) => c.key === queued) : undefined;
  const ready = checked && "report" in checked && !isEmptyReport(checked.report) && file;
  return (
    <section class="import" aria-labelledby="import-h">
      <h2 id="import-h">Import</h2>
      <form class="row" onSubmit={check} aria-label="Import risks">
        <label>CSV file<input ref={input} type="file" accept=".csv,text/csv" required
          onChange={(e) => (setFile(e.currentTarget.files?.[0] ?? null), setChecked(undefined))} /></label>
        <button type="submit" class="secondary">Check file</button>
        <button type="button" disabled={!ready} onClick={() => void doImport()}>Import</button>
      </form>
      {checked && <ImportReportView outcome={checked} dryRun />}
      {sent && <QueuedImport state={sent.state} result={sent.result} problem={sent.problem} />}
    </section>
  );
}

function QueuedImport(props: { state: string; result: unknown; problem: { detail?: string; errors?: RowError[] } | undefined }) {
  if (props.state === "pending") return <p class="report" role="status">Import queued: it is sent until the server settles it.</p>;
  if (props.state === "done") return <ImportReportView outcome={{ report: props.result as ImportReport }} dryRun={false} />;
  const p = props.problem;
  return <ImportReportView outcome={p?.errors?.length ? { rows: p.errors, detail: p.detail ?? "" } : { error: p?.detail ?? "The server refused the import." }} dryRun={false} />;
}
