/**
 * Deleting an attachment (DELETE /v1/attachments/{id}): asked to confirm,
 * then queued in the outbox like every change, keyed and carrying its
 * author; the attachment shows as "deleting" until the server settles it.
 */
import type { Attachment } from "../api";
import { AskFirst } from "../ask-first";
import type { Change } from "../outbox/change";
import { outbox } from "../state";

/** AttachmentDelete is an attachment's Delete button, with its confirmation. */
export function AttachmentDelete({ attachment, changes }: { attachment: Attachment; changes: Change[] }) {
  const path = `/attachments/${attachment.id}`;
  if (changes.some((c) => c.state === "pending" && c.method === "DELETE" && c.path === path)) {
    return <span class="badge pending">deleting</span>;
  }
  const del = () => void outbox().enqueue({ method: "DELETE", path, body: null, label: `Delete attachment “${attachment.filename}”` });
  return (
    <AskFirst small ask="Delete" askLabel={`Delete ${attachment.filename}`} label={`Delete ${attachment.filename}?`}
      text={`Delete ${attachment.filename}?`} confirm="Confirm delete" onConfirm={del} />
  );
}
