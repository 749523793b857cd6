/**
 * The dashboard's shared state: the outbox of this tab, the connection state,
 * and hooks that re-render when they change.
 */
import { useEffect, useState } from "preact/hooks";
import type { Change } from "./outbox/change";
import type { Outbox } from "./outbox/outbox";
import { onRemoteChange } from "./live";
import { onIdentityChange } from "./session";

let current: Outbox | undefined;

/** setOutbox installs the tab's outbox (main.tsx does, once). */
export function setOutbox(o: Outbox): void {
  current = o;
}

/** outbox returns the tab's outbox. */
export function outbox(): Outbox {
  if (!current) throw new Error("outbox not started");
  return current;
}

/** Upload progress of a change being sent, in bytes. */
export interface Progress {
  loaded: number;
  total: number;
}

/** useChanges returns the signed-in user's changes (oldest first) and the progress of uploads in flight. */
export function useChanges(): { changes: Change[]; progress: Record<string, Progress> } {
  const [changes, setChanges] = useState<Change[]>([]);
  const [progress, setProgress] = useState<Record<string, Progress>>({});
  useEffect(() => {
    let live = true;
    const reload = () => void outbox().list().then((all) => live && setChanges(all));
    reload();
    const off = outbox().subscribe((e) => {
      if (e.type === "progress") setProgress((p) => ({ ...p, [e.key]: { loaded: e.loaded, total: e.total } }));
      else reload();
    });
    const offIdentity = onIdentityChange(reload);
    return () => {
      live = false;
      off();
      offIdentity();
    };
  }, []);
  return { changes, progress };
}

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

/** useOnline tracks navigator.onLine. */
export function useOnline(): boolean {
  const [online, setOnline] = useState(navigator.onLine);
  useEffect(() => {
    const on = () => setOnline(true);
    const off = () => setOnline(false);
    addEventListener("online", on);
    addEventListener("offline", off);
    // The effect runs after the first paint: a change in between fired no event we heard.
    setOnline(navigator.onLine);
    return () => {
      removeEventListener("online", on);
      removeEventListener("offline", off);
    };
  }, []);
  return online;
}
