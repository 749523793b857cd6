/**
 * A filter form's draft of what is applied (docs/dashboard.md, "The register").
 */
import { useRef, useState } from "preact/hooks";

/** Edit changes a draft by a function of its latest value. */
export type Edit<T> = (change: (draft: T) => T) => void;

/**
 * useDraft returns a form's draft of `applied` and `edit`, which changes the
 * draft. The draft starts as `applied` and is replaced by it only when `key`
 * (what identifies `applied`, e.g. its URL) changes — back, forward, a link —
 * at that very render. An effect would do it a frame late, and on mount
 * too: whatever was typed in that frame (a fast user, a busy machine) was
 * wiped. `edit` takes a function of the latest draft, so two edits before a
 * render both count.
 */
export function useDraft<T>(applied: T, key: string): [T, Edit<T>] {
  const [, rerender] = useState(0);
  const state = useRef({ key, draft: applied });
  if (state.current.key !== key) state.current = { key, draft: applied };
  const edit = (change: (draft: T) => T) => {
    state.current = { ...state.current, draft: change(state.current.draft) };
    rerender((n) => n + 1);
  };
  return [state.current.draft, edit];
}

/**
 * trimmed is a draft with each text member's surrounding spaces dropped, as
 * it is applied: " IT " pasted into a filter means IT, and an ID copied with
 * a space around it is still that ID.
 */
export function trimmed<T extends object>(draft: T): T {
  return Object.fromEntries(Object.entries(draft).map(([k, v]) => [k, typeof v === "string" ? v.trim() : v])) as T;
}

/**
 * typed is an input's or select's handler that sets the draft's member k to
 * what it holds (read at the event: the change itself runs later).
 */
export function typed<T>(edit: Edit<T>, k: keyof T): (e: Event) => void {
  return (e) => {
    const v = (e.currentTarget as HTMLInputElement).value;
    edit((d) => ({ ...d, [k]: v }));
  };
}
