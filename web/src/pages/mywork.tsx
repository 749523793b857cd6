/**
 * My work: what the register asks of the signed-in user now (docs/dashboard.md,
 * "My work") — reviews due and overdue on the risks they own, their open
 * actions by due date (overdue first), and for an admin the acceptances
 * awaiting their decision (requested by someone else) and those expiring
 * within 14 days. Approve and reject are queued in the outbox like every change.
 */
import { api, type Acceptance, type Action, type Page, type Risk } from "../api";
import { isAdmin, type Session } from "../session";
import { useChanges } from "../state";
import { Offline, useList } from "./common";
import { today } from "../day";
import { OPEN_STATUSES } from "../register/view";
import { useActorNames } from "./audit";
import { AcceptanceItem, firstOf, namesAKey } from "./followup";

/** The review horizon of "due": REVIEW_DUE_DAYS's default, as the server's risk.review_due event has it. */
const REVIEW_DUE_DAYS = 7;
/** An approved acceptance is "expiring" this many days before validUntil, as acceptance.expiring. */
const EXPIRING_DAYS = 14;

const asPage = <T,>(data: T[]): Page<T> => ({ data, hasMore: false, nextCursor: null });

/** An acceptance with its risk's title, when the risk could be read. */
type Titled = Acceptance & { riskTitle?: string };

/**
 * withTitles adds each acceptance's risk title: a pending acceptance has no
 * riskSnapshot yet, and a list of risk IDs tells an admin nothing. Each risk is
 * read once; one that cannot be read (deleted) keeps its ID.
 */
async function withTitles(list: Acceptance[]): Promise<Titled[]> {
  const ids = [...new Set(list.filter((a) => !a.riskSnapshot).map((a) => a.riskId))];
  const titles = new Map<string, string>();
  await Promise.all(ids.map((id) => api().risks.get(id).then((r) => void titles.set(id, r.title), () => undefined)));
  return list.map((a) => ({ ...a, riskTitle: a.riskSnapshot?.title ?? titles.get(a.riskId) }));
}

/** MyWorkPage lists the signed-in user's reviews due, actions and acceptances to decide. */
export function MyWorkPage({ session }: { session: Session }) {
  const me = session.owner.userId;
  const admin = isAdmin(session);
  const { changes } = useChanges();
  // Risks whose owner is this user, due for review within the horizon (overdue included), soonest first.
  const reviews = useList<Risk>(`reviews-${me}`, async () => {
    // Not closed: a closed risk is reviewed no more (docs/register.md), as GET /my-work counts.
    const q = new URLSearchParams({ ownerId: me, reviewBefore: today(REVIEW_DUE_DAYS + 1), status: OPEN_STATUSES.join(","), sort: "reviewDate", limit: "100" });
    const r = await api().request({ method: "GET", path: `/risks?${q}` });
    return r.json as Page<Risk>;
  });
  const actions = useList<Action>(`actions-${me}`, async () => {
    const open = await firstOf(api().actions.list({ ownerId: me, status: "open" }), 200);
    // By due date, those without one last.
    return asPage(open.sort((a, b) => (a.dueDate ?? "9999").localeCompare(b.dueDate ?? "9999")));
  });
  const acceptances = useList<Titled>(admin ? `acceptances-${me}` : null, async () => {
    const [pending, approved] = await Promise.all([
      firstOf(api().acceptances.list({ status: "pending" }), 200),
      firstOf(api().acceptances.list({ status: "approved" }), 200),
    ]);
    const expiring = approved.filter((a) => a.validUntil <= today(EXPIRING_DAYS));
    return asPage(await withTitles([...pending.filter((a) => a.requestedBy.id !== me), ...expiring]));
  });
  const now = today();
  const toDecide = (acceptances.page?.data ?? []).filter((a) => a.status === "pending");
  const expiring = (acceptances.page?.data ?? []).filter((a) => a.status === "approved");
  // An API key that requested or decided is named as on the risk's page.
  const names = useActorNames(admin && namesAKey([...toDecide, ...expiring]));
  return (
    <section class="my-work">
      <h1>My work</h1>
      <section aria-labelledby="mw-reviews">
        <h2 id="mw-reviews">Reviews due</h2>
        {reviews.offline ? <Offline what="your reviews" /> : reviews.error && <p class="error" role="alert">{reviews.error}</p>}
        <ul aria-label="Reviews due">
          {(reviews.page?.data ?? []).map((r) => (
            <li key={r.id}>
              <a href={`/risks/${encodeURIComponent(r.id)}`}>{r.title}</a> — review by <time dateTime={r.reviewDate ?? ""}>{r.reviewDate}</time>
              {r.reviewDate && r.reviewDate < now && <span class="badge overdue"> overdue</span>}
            </li>
          ))}
          {reviews.page?.data.length === 0 && <li class="empty">No review due in the next {REVIEW_DUE_DAYS} days.</li>}
        </ul>
      </section>
      <section aria-labelledby="mw-actions">
        <h2 id="mw-actions">My actions</h2>
        {actions.offline ? <Offline what="your actions" /> : actions.error && <p class="error" role="alert">{actions.error}</p>}
        <ul aria-label="My actions">
          {(actions.page?.data ?? []).map((a) => (
            <li key={a.id}>
              <a href={`/risks/${encodeURIComponent(a.riskId)}`}>{a.title}</a> — due {a.dueDate ?? "no date"}
              {a.dueDate && a.dueDate < now && <span class="badge overdue"> overdue</span>}
            </li>
          ))}
          {actions.page?.data.length === 0 && <li class="empty">No open action of yours.</li>}
        </ul>
      </section>
      {admin && (
        <>
          <section aria-labelledby="mw-decide">
            <h2 id="mw-decide">Acceptances awaiting your decision</h2>
            {acceptances.offline ? <Offline what="acceptances" /> : acceptances.error && <p class="error" role="alert">{acceptances.error}</p>}
            <ul aria-label="Acceptances awaiting your decision">
              {toDecide.map((a) => <AcceptanceItem key={a.id} acceptance={a} changes={changes} admin withRisk riskTitle={a.riskTitle} names={names} />)}
              {acceptances.page && toDecide.length === 0 && <li class="empty">Nothing awaits your decision.</li>}
            </ul>
          </section>
          <section aria-labelledby="mw-expiring">
            <h2 id="mw-expiring">Acceptances expiring</h2>
            <ul aria-label="Acceptances expiring">
              {expiring.map((a) => <AcceptanceItem key={a.id} acceptance={a} changes={changes} admin withRisk riskTitle={a.riskTitle} names={names} />)}
              {acceptances.page && expiring.length === 0 && <li class="empty">No acceptance expires in the next {EXPIRING_DAYS} days.</li>}
            </ul>
          </section>
        </>
      )}
    </section>
  );
}
