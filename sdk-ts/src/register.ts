/**
 * The risk register's calls beyond one risk (docs/register.md): the filters,
 * search and sort of the list, the heat map, the streamed export and the CSV
 * import. The query every filter becomes is built here, once, for the list,
 * the heat map and the export alike.
 */

import { multipartBody, type UploadSource } from "./attachments.js";
import type { Send } from "./page.js";
import type { CallOptions } from "./transport.js";
import type { Heatmap, ImportReport, RiskExportParams, RiskHeatmapParams, RiskListParams } from "./types.js";

/**
 * riskQuery turns a filter (and any list, heat map or export parameters) into
 * the query the server reads: lists of statuses or treatments joined by
 * commas, `metadata` as one `metadata[KEY]` parameter per key, absent members
 * left out.
 */
export function riskQuery(params: RiskListParams | RiskHeatmapParams | RiskExportParams): Record<string, string | number | undefined> {
  const out: Record<string, string | number | undefined> = {};
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) continue;
    if (k === "metadata") {
      for (const [mk, mv] of Object.entries(v as Record<string, string>)) out[`metadata[${mk}]`] = mv;
    } else if (Array.isArray(v)) {
      if (v.length > 0) out[k] = v.join(",");
    } else if (typeof v === "boolean") {
      out[k] = String(v);
    } else {
      out[k] = v as string | number;
    }
  }
  return out;
}

/**
 * heatmap counts the risks the filter selects by likelihood × impact (GET
 * /risks/heatmap): 25 cells, likelihood-major, and the unassessed ones.
 */
export async function heatmap(send: Send, params: RiskHeatmapParams, opts?: CallOptions): Promise<Heatmap> {
  const r = await send({ method: "GET", path: "/risks/heatmap", query: riskQuery(params), expect: "json" }, opts);
  return r.json as Heatmap;
}

/**
 * A streamed export: the headers at once, the rows as they arrive. Read it
 * once, with one of `lines()`, `chunks()` or `response`.
 */
export interface RiskExport {
  /** "text/csv" or "application/x-ndjson" (with any parameters the server added). */
  contentType: string;
  /** The filename the server suggests in Content-Disposition, e.g. "risks.csv". */
  filename: string;
  /** The unread response (`.body` is a ReadableStream of bytes, `.blob()` for a download link). */
  response: Response;
  /** The body's bytes as they arrive. */
  chunks(): AsyncGenerator<Uint8Array, void, undefined>;
  /**
   * The body's lines as they arrive, UTF-8 decoded, without their line
   * ends. For CSV this is a line, not a record: a quoted cell may hold a
   * line break, so parse CSV with a CSV reader over `chunks()`; an NDJSON
   * line is one risk.
   */
  lines(): AsyncGenerator<string, void, undefined>;
}

/**
 * exportRisks opens the export of the risks the filter selects (GET
 * /risks/export). The call is retried until the headers arrive; a
 * connection lost while the body streams rejects the read (export again).
 */
export async function exportRisks(send: Send, params: RiskExportParams, opts?: CallOptions): Promise<RiskExport> {
  const r = await send({ method: "GET", path: "/risks/export", query: riskQuery(params), expect: "raw", accept: "*/*" }, opts);
  const res = r.response;
  const disposition = res.headers.get("Content-Disposition") ?? "";
  const filename = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? (params.format === "ndjson" ? "risks.ndjson" : "risks.csv");
  return {
    contentType: res.headers.get("Content-Type") ?? "",
    filename,
    response: res,
    chunks: () => chunksOf(res),
    lines: () => linesOf(chunksOf(res)),
  };
}

/** chunksOf reads a response body with a reader (async iteration of ReadableStream is missing in some browsers). */
async function* chunksOf(res: Response): AsyncGenerator<Uint8Array, void, undefined> {
  if (!res.body) return;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // A `break` out of the caller's loop cancels the download.
    await reader.cancel().catch(() => undefined);
  }
}

/** linesOf splits UTF-8 chunks into lines (LF or CRLF), a character split across chunks kept whole. */
export async function* linesOf(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const c of chunks) {
    rest += decoder.decode(c, { stream: true });
    let i: number;
    while ((i = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, i).replace(/\r$/, "");
      rest = rest.slice(i + 1);
    }
  }
  rest += decoder.decode();
  if (rest !== "") yield rest.replace(/\r$/, "");
}

/** The CSV to import and how. */
export interface RiskImportParams {
  /** The CSV's bytes: a header row naming columns of an export, then one risk per row. Re-readable, so a retry sends the same bytes. */
  file: UploadSource;
  /** The filename sent with it; default the File's name, else "file". */
  filename?: string;
  /** True: answer what the import would do and write nothing. */
  dryRun?: boolean;
}

/**
 * importRisks sends the CSV (POST /risks/import, multipart part "file"),
 * keyed like every write: a retry under the same Idempotency-Key is
 * replayed, never imported twice. A bad row rejects with a 400 RiskApiError
 * whose `errors` name each row (`row`, the header being row 1) and field.
 */
export async function importRisks(send: Send, params: RiskImportParams, opts?: CallOptions): Promise<ImportReport> {
  const body = multipartBody({ file: params.file, contentType: "text/csv", ...(params.filename ? { filename: params.filename } : {}) });
  const query = params.dryRun ? { dryRun: "true" } : {};
  const r = await send({ method: "POST", path: "/risks/import", query, body, expect: "json" }, opts);
  return r.json as ImportReport;
}
