/**
 * instant turns a datetime-local value from a page's address (the user's
 * clock, e.g. "2026-12-03T09:30") into RFC 3339 in UTC for the API; "" is
 * undefined (no filter). An unreadable time goes to the server as typed, and
 * the server's 400 names what is wrong with it: toISOString would throw on it
 * and take the page down.
 */
export function instant(local: string): string | undefined {
  if (!local) return undefined;
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? local : t.toISOString();
}

/** localValue is instant's inverse: an RFC 3339 time as a datetime-local input's value, on the user's clock, to the minute. */
export function localValue(iso: string): string {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}
