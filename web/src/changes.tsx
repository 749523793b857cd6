/**
 * What the outbox holds, for the user: a pending-changes indicator in the
 * header (here, in the first load) and a panel listing each change as
 * pending, done or refused (changes-panel.tsx, a chunk of its own).
 */
import { redone } from "./outbox/change";
import { useChanges } from "./state";

/**
 * PendingIndicator says how many changes are not yet settled, and how many
 * the server refused and the user has not made again since (redone), in the
 * refusal's own colour: "All changes saved" only when nothing is pending or
 * refused.
 */
export function PendingIndicator() {
  const { changes } = useChanges();
  const pending = changes.filter((c) => c.state === "pending").length;
  const refused = changes.filter((c) => c.state === "refused" && !redone(c, changes)).length;
  const conflicts = changes.filter((c) => c.state === "conflict").length;
  const cls = pending ? "indicator pending" : refused || conflicts ? "indicator refused" : "indicator";
  return (
    <span class={cls} role="status" aria-live="polite" data-testid="pending-indicator">
      {pending === 1 ? "1 change pending" : pending > 1 ? `${pending} changes pending` : refused || conflicts ? "" : "All changes saved"}
      {refused > 0 && <span class="badge refused">{refused === 1 ? "1 change refused" : `${refused} changes refused`}</span>}
      {conflicts > 0 && <span class="badge conflict">{conflicts === 1 ? "1 change in conflict" : `${conflicts} changes in conflict`}</span>}
    </span>
  );
}
