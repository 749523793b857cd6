/**
 * One risk: edit it, delete it, and its attachments (upload with a progress
 * bar, download). Every change goes through the outbox.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError, get, type Attachment, type Risk, type RiskUpdateParams } from "../api";
import { UploadProgress } from "../changes";
import { navigate } from "../router";
import { outbox, useChanges, useSettled } from "../state";

/** ScoreSelect is a 1–5 select with a visible label (likelihood, impact). */
export function ScoreSelect(props: { label: string; value: string; onChange: (v: string) => void }) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {["1", "2", "3", "4", "5"].map((v) => (
          <option key={v} value={v}>{v}</option>
        ))}
      </select>
    </label>
  );
}

/** RiskPage shows and edits the risk `id`. */
export function RiskPage({ id }: { id: string }) {
  const [risk, setRisk] = useState<Risk | undefined>();
  const [error, setError] = useState("");
  const load = useCallback(() => {
    get<Risk>(`/v1/risks/${encodeURIComponent(id)}`).then(setRisk, (err: unknown) =>
      setError(err instanceof ApiError && err.status === 404 ? "This risk does not exist (or was deleted)." : String(err)),
    );
  }, [id]);
  useEffect(load, [load]);
  useSettled(load);
  if (error) return <p class="error" role="alert">{error} <a href="/">Back to risks</a></p>;
  if (!risk) return <p class="loading">Loading…</p>;
  return (
    <section>
      <p><a href="/">← Risks</a></p>
      <h1>{risk.title}</h1>
      <EditRisk risk={risk} />
      <Attachments risk={risk} />
      <DeleteRisk risk={risk} />
    </section>
  );
}

function EditRisk({ risk }: { risk: Risk }) {
  const [f, setF] = useState(() => formOf(risk));
  useEffect(() => setF(formOf(risk)), [risk]);
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v });
  const submit = async (e: Event) => {
    e.preventDefault();
    const json: RiskUpdateParams = {
      title: f.title, description: f.description, category: f.category, owner: f.owner, status: f.status as Risk["status"],
      likelihood: Number(f.likelihood), impact: Number(f.impact),
      riskScore: Number(f.likelihood) * Number(f.impact),
    };
    await outbox().enqueue({ method: "PATCH", path: `/v1/risks/${risk.id}`, body: { kind: "json", json }, label: `Edit risk “${f.title}”` });
  };
  return (
    <form class="edit-risk" onSubmit={submit} aria-label="Edit risk">
      <label>Title<input required maxLength={200} value={f.title} onInput={(e) => set("title")(e.currentTarget.value)} /></label>
      <label>Description<textarea value={f.description} onInput={(e) => set("description")(e.currentTarget.value)} /></label>
      <label>Category<input value={f.category} onInput={(e) => set("category")(e.currentTarget.value)} /></label>
      <label>Owner<input value={f.owner} onInput={(e) => set("owner")(e.currentTarget.value)} /></label>
      <ScoreSelect label="Likelihood" value={f.likelihood} onChange={set("likelihood")} />
      <ScoreSelect label="Impact" value={f.impact} onChange={set("impact")} />
      <label>
        Status
        <select value={f.status} onChange={(e) => set("status")(e.currentTarget.value)}>
          <option value="open">open</option><option value="mitigated">mitigated</option><option value="closed">closed</option>
        </select>
      </label>
      <button type="submit">Save changes</button>
    </form>
  );
}

function formOf(r: Risk) {
  return {
    title: r.title, description: r.description, category: r.category, owner: r.owner, status: r.status as string,
    likelihood: String(r.likelihood ?? 3), impact: String(r.impact ?? 3),
  };
}

function DeleteRisk({ risk }: { risk: Risk }) {
  const [confirming, setConfirming] = useState(false);
  const del = async () => {
    await outbox().enqueue({ method: "DELETE", path: `/v1/risks/${risk.id}`, body: null, label: `Delete risk “${risk.title}”` });
    navigate("/");
  };
  return (
    <div class="danger row">
      {confirming ? (
        <>
          <span>Delete this risk and its attachments?</span>
          <button type="button" class="danger" onClick={del}>Confirm delete</button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>Cancel</button>
        </>
      ) : (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete risk</button>
      )}
    </div>
  );
}

function Attachments({ risk }: { risk: Risk }) {
  const [list, setList] = useState<Attachment[]>([]);
  const [file, setFile] = useState<File | null>(null);
  const [description, setDescription] = useState("");
  const { changes, progress } = useChanges();
  const path = `/v1/risks/${risk.id}/attachments`;
  const load = useCallback(() => {
    get<{ data: Attachment[] }>(path).then((r) => setList(r.data), () => undefined);
  }, [path]);
  useEffect(load, [load]);
  useSettled(load);
  const uploads = changes.filter((c) => c.state === "pending" && c.path === path);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    if (!file) return;
    const fields: Record<string, string> = description ? { description } : {};
    // The File is a Blob: IndexedDB keeps it until the upload settles.
    await outbox().enqueue({ method: "POST", path, body: { kind: "file", file, filename: file.name, fields }, label: `Upload “${file.name}”` });
    form.reset();
    setFile(null);
    setDescription("");
  };
  return (
    <section class="attachments">
      <h2>Attachments</h2>
      <ul>
        {list.map((a) => (
          <li key={a.id}>
            <a href={`/v1/attachments/${encodeURIComponent(a.id)}/content`} download={a.filename}>{a.filename}</a>{" "}
            <span class="meta">{formatSize(a.size)}{a.description ? ` — ${a.description}` : ""}</span>
          </li>
        ))}
        {uploads.map((c) => (
          <li key={c.key} class="pending">
            {c.body?.kind === "file" ? c.body.filename : ""} <span class="badge pending">uploading</span>
            {progress[c.key] && <UploadProgress p={progress[c.key]!} />}
          </li>
        ))}
        {list.length === 0 && uploads.length === 0 && <li class="empty">No attachments.</li>}
      </ul>
      <form onSubmit={submit} class="row" aria-label="Upload attachment">
        <label>File<input type="file" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} /></label>
        <label>Attachment description<input value={description} onInput={(e) => setDescription(e.currentTarget.value)} /></label>
        <button type="submit">Upload</button>
      </form>
    </section>
  );
}

function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
