/**
 * Pieces the read-only pages share: loading a list that may not exist on
 * this server, and saying so.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { get, isUnavailable, type Page } from "../api";
import { useSettled } from "../state";

/** Loaded is what useList returns: the page, or why there is none. */
export interface Loaded<T> {
  page: Page<T> | undefined;
  unavailable: boolean;
  error: string;
  reload: () => void;
}

/** useList GETs path (a /v1 list route) and re-reads it when a change settles. */
export function useList<T>(path: string | null): Loaded<T> {
  const [page, setPage] = useState<Page<T> | undefined>();
  const [unavailable, setUnavailable] = useState(false);
  const [error, setError] = useState("");
  const reload = useCallback(() => {
    if (!path) return;
    get<Page<T>>(path).then(
      (p) => {
        setPage(p);
        setError("");
        setUnavailable(false);
      },
      (err: unknown) => {
        if (isUnavailable(err)) setUnavailable(true);
        else setError(err instanceof Error ? err.message : String(err));
      },
    );
  }, [path]);
  useEffect(reload, [reload]);
  useSettled(reload);
  return { page, unavailable, error, reload };
}

/** Unavailable says this server does not offer a feature (its route answered 404). */
export function Unavailable({ what, route }: { what: string; route: string }) {
  return (
    <div class="unavailable" role="note">
      <strong>{what} is not available on this server.</strong> <code>{route}</code> answered 404; a newer riskapi serves it.
    </div>
  );
}

/** Secret shows a secret that the server returns only once, with a copy button. */
export function Secret({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="alert">
      <p>
        <strong>{label}</strong> — shown only this once; it is not stored in this browser and cannot be shown again.
      </p>
      <code data-testid="secret">{value}</code>{" "}
      <button type="button" onClick={() => void navigator.clipboard.writeText(value).then(() => setCopied(true))}>
        {copied ? "Copied" : "Copy"}
      </button>{" "}
      <button type="button" class="secondary" onClick={onDone}>Done</button>
    </div>
  );
}

/** OnlineOnly explains why a form that creates a secret is not queued. */
export function OnlineOnly({ online }: { online: boolean }) {
  return (
    <p class="hint">
      Needs a connection: the response carries a secret shown once, so this is never queued for later
      {online ? "." : " — you are offline now."}
    </p>
  );
}
