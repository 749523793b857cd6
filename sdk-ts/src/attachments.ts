/** The attachment calls, under /v1 and /v2 (docs/openapi.yaml, tag "attachments"; docs/uploads-and-webhooks.md). */

import { getPage, paginate, type Send } from "./page.js";
import type { CallOptions, Request } from "./transport.js";
import type { Attachment, ListParams, Page } from "./types.js";

/**
 * The bytes of an upload. Each is re-readable, so every retry sends the same
 * bytes (and the server's fingerprint, which covers their SHA-256, matches):
 * a Blob or File (browsers), a Buffer or other Uint8Array, an ArrayBuffer, or
 * a string (sent as UTF-8). Streams are not accepted, because a retry could
 * not read them again.
 */
export type UploadSource = Blob | ArrayBuffer | Uint8Array | string;

/** The parts of an upload. */
export interface AttachmentUploadParams {
  /** The file's bytes. */
  file: UploadSource;
  /** The filename kept with it; default the File's name, else "file". */
  filename?: string;
  /** Its MIME type; default the Blob's type, else application/octet-stream. */
  contentType?: string;
  /** An optional description, at most 10,000 characters. */
  description?: string;
}

/** A downloaded attachment: the headers at once, the bytes as you read them. */
export interface AttachmentContent {
  /** The MIME type given at upload. */
  contentType: string;
  /** The size in bytes from Content-Length, when the server sent one. */
  size: number | undefined;
  /** The lowercase hex SHA-256 of the bytes (the ETag), when sent. */
  sha256: string | undefined;
  /** The unread response: read it with `.arrayBuffer()`, `.blob()` or `.body`. A connection lost while reading rejects the read; download again. */
  response: Response;
}

/** Files attached to risks of the API key's tenant. */
export class Attachments {
  constructor(private readonly send: Send) {}

  /** Uploads a file to a risk (POST /v2/risks/{id}/attachments, multipart/form-data, 201). */
  async upload(riskId: string, params: AttachmentUploadParams, opts?: CallOptions): Promise<Attachment> {
    const fields: Record<string, string> = params.description !== undefined ? { description: params.description } : {};
    const r = await this.send(
      { method: "POST", path: `/risks/${encodeURIComponent(riskId)}/attachments`, body: multipartBody(params, fields), expect: "json" },
      opts,
    );
    return r.json as Attachment;
  }

  /** Reads one page of a risk's attachments, oldest first. */
  async listPage(riskId: string, params: ListParams = {}, opts?: CallOptions): Promise<Page<Attachment>> {
    return getPage<Attachment>(this.send, `/risks/${encodeURIComponent(riskId)}/attachments`, params, opts);
  }

  /** Every attachment of a risk, page by page: `for await (const a of client.attachments.list(riskId)) …`. */
  list(riskId: string, params: ListParams = {}, opts?: CallOptions): AsyncGenerator<Attachment, void, undefined> {
    return paginate((cursor) => this.listPage(riskId, { limit: params.limit, cursor }, opts), params.cursor);
  }

  /**
   * Deletes an attachment (DELETE /v2/attachments/{id}, 204): its content is
   * 404 from then on. Keyed like every write, so a retry of a delete that went
   * through is replayed, not a 404.
   */
  async delete(attachmentId: string, opts?: CallOptions): Promise<void> {
    await this.send({ method: "DELETE", path: `/attachments/${encodeURIComponent(attachmentId)}`, expect: "empty" }, opts);
  }

  /** Downloads an attachment's bytes (GET /v2/attachments/{id}/content); retried until its headers arrive. */
  async download(attachmentId: string, opts?: CallOptions): Promise<AttachmentContent> {
    const r = await this.send(
      { method: "GET", path: `/attachments/${encodeURIComponent(attachmentId)}/content`, expect: "raw", accept: "*/*" },
      opts,
    );
    const h = r.response.headers;
    const len = h.get("Content-Length");
    const etag = h.get("ETag")?.replace(/^"|"$/g, "");
    return {
      contentType: h.get("Content-Type") ?? "application/octet-stream",
      size: len === null ? undefined : Number(len),
      sha256: etag || undefined,
      response: r.response,
    };
  }
}

/**
 * multipartBody makes the body of an upload: a new form per attempt over the
 * same Blob (fetch consumes a body), the file under "file", then the fields.
 */
export function multipartBody(params: Omit<AttachmentUploadParams, "description">, fields: Record<string, string> = {}): NonNullable<Request["body"]> {
  const blob = toBlob(params.file, params.contentType);
  const filename = params.filename ?? fileName(params.file) ?? "file";
  return () => {
    const form = new FormData();
    form.append("file", blob, filename);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    return { body: form };
  };
}

function toBlob(file: UploadSource, contentType: string | undefined): Blob {
  if (file instanceof Blob) {
    return contentType === undefined || contentType === file.type ? file : new Blob([file], { type: contentType });
  }
  // Buffers are ArrayBuffer-backed, which is what BlobPart asks for.
  return new Blob([file as BlobPart], { type: contentType ?? "application/octet-stream" });
}

function fileName(file: UploadSource): string | undefined {
  const name = (file as { name?: unknown }).name;
  return typeof name === "string" && name !== "" ? name : undefined;
}
