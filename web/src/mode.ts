/**
 * The Test data switch (docs/sandboxes.md, docs/dashboard.md): whether this tab
 * shows the tenant's sandbox instead of its live data. Kept per browser session
 * (sessionStorage), so a new session starts on live data. Every request the
 * dashboard sends says the mode (Riskapi-Mode, through the SDK's testData), and
 * each queued change keeps the mode it was made in, whatever the switch says
 * when it is sent.
 */

/** Mode is what a request reaches: live data, or the sandbox. */
export type Mode = "live" | "test";

/** MODE_HEADER names the mode of a session's request (the server's auth.ModeHeader). */
export const MODE_HEADER = "Riskapi-Mode";

const KEY = "riskapi-test-data";
const CHANGED = "riskapi:mode";

/** mode is the switch's position now. */
export function mode(): Mode {
  try {
    return sessionStorage.getItem(KEY) === "on" ? "test" : "live";
  } catch {
    return "live";
  }
}

/** setMode moves the switch and tells the page (onModeChange). */
export function setMode(m: Mode): void {
  try {
    if (m === "test") sessionStorage.setItem(KEY, "on");
    else sessionStorage.removeItem(KEY);
  } catch {
    // No storage (a private window's quota): the switch holds for this page only.
  }
  dispatchEvent(new Event(CHANGED));
}

/** onModeChange calls fn whenever the switch moves; it returns the unsubscribe. */
export function onModeChange(fn: () => void): () => void {
  addEventListener(CHANGED, fn);
  return () => removeEventListener(CHANGED, fn);
}
