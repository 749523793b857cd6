/**
 * The shell's seldom-shown parts, kept out of the first load (the sign-in
 * form): the question asked when signing out with changes not yet sent, and
 * the app's own "Page not found". They load with the risk list's chunk
 * (pages/risks.tsx re-exports them), which a signed-in browser fetches at
 * start-up, so the question is there offline too.
 */

/** NotFound is the app's own page for a path it does not have. */
export function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>There is no page at <code>{location.pathname}</code>.</p>
      <p><a href="/">Go to the risks</a></p>
    </section>
  );
}

/** ConfirmSignOut asks what becomes of changes not yet sent. */
export function ConfirmSignOut(props: { count: number; onChoose: (c: "keep" | "discard") => void; onCancel: () => void }) {
  const n = props.count;
  return (
    <div class="confirm row" role="alertdialog" aria-label="Sign out with unsent changes">
      <span>
        {n === 1 ? "1 change has" : `${n} changes have`} not reached the server yet. Keep {n === 1 ? "it" : "them"} in this
        browser until you sign in again, or discard {n === 1 ? "it" : "them"}? Nobody else can send or see {n === 1 ? "it" : "them"}.
      </span>
      <button type="button" class="secondary" onClick={() => props.onChoose("keep")}>Keep and sign out</button>
      <button type="button" class="danger" onClick={() => props.onChoose("discard")}>Discard and sign out</button>
      <button type="button" class="secondary" onClick={props.onCancel}>Cancel</button>
    </div>
  );
}
