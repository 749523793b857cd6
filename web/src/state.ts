/**
 * The dashboard's shared state: the outbox of this tab, the connection state,
 * and hooks that re-render when they change.
 */
import { useEffect, useState } from "preact/hooks";
import type { Change } from "./outbox/change";
import type { Outbox } from "./outbox/outbox";
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
