/**
 * Deleting an attachment (DELETE /v1/attachments/{id}): asked to confirm,
 * then queued in the outbox like every change, keyed and carrying its
 * author; the attachment shows as "deleting" until the server settles it.
 */
import { useState } from "preact/hooks";
import type { Attachment } from "../api";
import type { Change } from "../outbox/change";
import { outbox } from "../state";

/** AttachmentDelete is an attachment's Delete button, with its confirmation. */
export function AttachmentDelete({ attachment, changes }: { attachment: Attachment; changes: Change[] }) {
  const [confirming, setConfirming] = useState(false);
  const path = `/attachments/${attachment.id}`;
  if (changes.some((c) => c.state === "pending" && c.method === "DELETE" && c.path === path)) {
    return <span class="badge pending">deleting</span>;
  }
  const del = async () => {
    setConfirming(false);
    await outbox().enqueue({ method: "DELETE", path, body: null, label: `Delete attachment “${attachment.filename}”` });
  };
  if (!confirming) {
    return <button type="button" class="danger small" aria-label={`Delete ${attachment.filename}`} onClick={() => setConfirming(true)}>Delete</button>;
  }
  return (
    <span class="confirm" role="group" aria-label={`Delete ${attachment.filename}?`}>
      Delete {attachment.filename}?{" "}
      <button type="button" class="danger small" onClick={() => void del()}>Confirm delete</button>{" "}
      <button type="button" class="secondary small" onClick={() => setConfirming(false)}>Cancel</button>
    </span>
  );
}
