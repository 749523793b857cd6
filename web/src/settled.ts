/**
 * useSettled, apart from state.ts so that live.ts rides in the chunks of the pages
 * that re-read (the register, a risk, history, admin lists, My work), not in the
 * first load a signed-out visitor pays for (docs/performance.md, first load).
 */
import { useEffect } from "preact/hooks";
import { onRemoteChange } from "./live";
import { outbox } from "./state";

/**
 * useSettled calls fn whenever a change settles, done or refused, or meets a
 * conflict (in any tab), or the tenant's data changed elsewhere (live.ts): time to re-read, so that the page shows what the
 * server holds — a refused change leaves nothing of itself on the page, and a
 * conflict shows the other writer's values beside the user's.
 */
export function useSettled(fn: () => void): void {
  useEffect(() => {
    const off = outbox().subscribe((e) => e.type === "changed" && (e.state === "done" || e.state === "refused" || e.state === "conflict") && fn());
    // And another user's change: the tenant's newest event moved (live.ts).
    const offRemote = onRemoteChange(fn);
    return () => {
      off();
      offRemote();
    };
  }, [fn]);
}
