/**
 * Admin pages: users, API keys, webhook sources and endpoints. Creating
 * anything whose response carries a secret (a key, a source, an endpoint) or
 * a password (a user) is online-only: it is sent now or not at all, and never
 * kept in the outbox. Role changes and removals are ordinary queued changes.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, explain, RiskApiError, type ApiKey, type DeliveryAttempt as Delivery, type User, type WebhookEndpoint as Endpoint, type WebhookSource as Source } from "../api";
import { EVENT_TYPES, SCOPES } from "../lists";
import { AskFirst, Confirmation } from "../ask-first";
import { isAdmin, roleChanged, type Session } from "../session";
import { outbox, useChanges, useOnline } from "../state";
import { OnlineOnly, Secret, Unavailable, useList, useOneAtATime, useRefusal } from "./common";
import { instant, localValue } from "../instant";

/** AdminPage picks the admin section from the path. */
export function AdminPage({ path, session }: { path: string; session: Session }) {
  if (!isAdmin(session)) return <p class="error" role="alert">Only admins manage users, API keys and webhooks.</p>;
  return (
    <section>
      <h1>Admin</h1>
      <nav class="tabs" aria-label="Admin">
        <a href="/admin/users" aria-current={path === "/admin/users" ? "page" : undefined}>Users</a>
        <a href="/admin/api-keys" aria-current={path === "/admin/api-keys" ? "page" : undefined}>API keys</a>
        <a href="/admin/webhooks" aria-current={path.startsWith("/admin/webhooks") ? "page" : undefined}>Webhooks</a>
      </nav>
      {path === "/admin/api-keys" ? <ApiKeys />
        : path.startsWith("/admin/webhooks/") ? <EndpointPage id={decodeURIComponent(path.slice("/admin/webhooks/".length))} />
        : path === "/admin/webhooks" ? <Webhooks /> : <Users session={session} />}
    </section>
  );
}

/**
 * useCreate sends an online-only create and keeps its error and, for routes
 * that answer with a secret, the secret to show once. After a success it
 * re-reads the list. A second create while one is on its way (a double
 * click) is ignored (useOneAtATime): it would make a second key, source or endpoint.
 */
function useCreate(reload: () => void, verb = "created") {
  const [error, setError] = useState("");
  const [secret, setSecret] = useState("");
  const once = useOneAtATime();
  const run = async <T,>(create: () => Promise<T>, secretOf?: (created: T) => string): Promise<boolean> =>
    (await once(async () => {
      setError("");
      try {
        const created = await create();
        if (secretOf) setSecret(secretOf(created));
        reload();
        return true;
      } catch (err) {
        setError(err instanceof RiskApiError ? `Not ${verb}: ${explain(err)}` : `Cannot reach the server; nothing was ${verb}.`);
        return false;
      }
    })) ?? false;
  // clears go on the form: an error about the values sent is stale once they
  // change (else it stays beside a submit the browser itself blocked). Text clears
  // it as it is typed; a checkbox or radio on its change only, since its input
  // event comes first and that render put the box back before its own handler
  // read it.
  const clears = {
    onInput: (e: Event) => {
      const t = e.target;
      if (!(t instanceof HTMLInputElement && (t.type === "checkbox" || t.type === "radio"))) setError("");
    },
    onChange: () => setError(""),
  };
  return { error, secret, clearSecret: () => setSecret(""), clears, run };
}

function Users({ session }: { session: Session }) {
  const list = useList<User>("users", () => api().users.listPage({ limit: 100 }));
  const { changes } = useChanges();
  // A refused role change: the table shows the role the server holds (re-read), and says why.
  const [refusal, setRefusal] = useState("");
  useRefusal(changes, "user-role", undefined, (c) => setRefusal(`${c.label}: refused — ${c.problem?.detail ?? c.lastReason ?? ""}`));
  const pendingRole = (id: string) => {
    const c = [...changes].reverse().find((x) => x.state === "pending" && x.path === `/users/${id}` && x.method === "PATCH");
    return (c?.body?.kind === "json" ? (c.body.json as { role?: string }).role : undefined);
  };
  const online = useOnline();
  const create = useCreate(list.reload);
  const [f, setF] = useState({ email: "", password: "", role: "member" });
  // Making oneself a member takes away this page: it is asked first, and once
  // saved the app asks who the user is now, so it stops showing admin pages.
  const [demoting, setDemoting] = useState(false);
  // Cancel gives focus back to the own role's select, drawn anew (its key changed).
  const ownSelect = useRef<HTMLSelectElement>(null);
  const refocus = useRef(false);
  useEffect(() => {
    if (demoting || !refocus.current) return;
    refocus.current = false;
    ownSelect.current?.focus();
  }, [demoting]);
  const meId = session.me?.user.id;
  const ownRoleSaved = [...changes].reverse().find((c) => c.state === "done" && c.method === "PATCH" && c.path === `/users/${meId}`)?.key;
  useEffect(() => {
    if (ownRoleSaved) roleChanged();
  }, [ownRoleSaved]);
  const setRole = (u: User, role: string) => void outbox().enqueue({
    method: "PATCH", path: `/users/${u.id}`, body: { kind: "json", json: { role } },
    label: `Make ${u.email} ${role}`, form: { name: "user-role", values: { role } },
  });
  if (list.unavailable) return <Unavailable what="User management" route="GET /v1/users" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await create.run(() => api().users.create({ ...f, role: f.role as User["role"] }))) setF({ email: "", password: "", role: "member" });
  };
  return (
    <>
      {list.error && <p class="error" role="alert">{list.error}</p>}
      {refusal && <p class="error" role="alert">{refusal} <button type="button" class="link" onClick={() => setRefusal("")}>Dismiss</button></p>}
      <table>
        <thead><tr><th>Email</th><th>Role</th><th>Since</th><th /></tr></thead>
        <tbody>
          {list.page?.data.map((u) => (
            <tr key={u.id}>
              <td>{u.email}</td>
              <td>
                {/* Keyed by what it shows, so a refused change cannot leave the select on a role the server does not hold. */}
                <select key={`${u.role}|${pendingRole(u.id) ?? ""}|${demoting && u.id === meId}`} ref={u.id === meId ? ownSelect : undefined} aria-label={`Role of ${u.email}`} value={pendingRole(u.id) ?? u.role}
                  onChange={(e) => (u.id === meId && e.currentTarget.value === "member" ? setDemoting(true) : setRole(u, e.currentTarget.value))}>
                  <option value="admin">admin</option><option value="member">member</option>
                </select>
                {demoting && u.id === meId && (
                  <Confirmation label="Make yourself a member?" confirm="Confirm"
                    text="Make yourself a member? You lose Admin and the audit log at once; only another admin can give them back."
                    onConfirm={() => {
                      setDemoting(false);
                      setRole(u, "member");
                    }}
                    onCancel={() => {
                      refocus.current = true;
                      setDemoting(false);
                    }} />
                )}
              </td>
              <td>{new Date(u.createdAt).toLocaleDateString()}</td>
              <td>
                {u.id !== session.me?.user.id && (
                  <AskFirst ask="Remove" label={`Remove ${u.email}?`} text="Remove? Their sessions end and they can no longer sign in." confirm="Confirm remove"
                    onConfirm={() => void outbox().enqueue({ method: "DELETE", path: `/users/${u.id}`, body: null, label: `Remove user ${u.email}` })} />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Add a user</h2>
      <form class="row" onSubmit={submit} {...create.clears} aria-label="Add a user">
        <label>Email<input type="email" required value={f.email} onInput={(e) => setF({ ...f, email: e.currentTarget.value })} /></label>
        <label>Password<input type="password" autocomplete="new-password" required minLength={8} value={f.password} onInput={(e) => setF({ ...f, password: e.currentTarget.value })} /></label>
        <label>Role<select value={f.role} onChange={(e) => setF({ ...f, role: e.currentTarget.value })}><option>member</option><option>admin</option></select></label>
        <button type="submit" disabled={!online}>Add user</button>
      </form>
      <p class="hint">Needs a connection: a password is never kept in this browser's outbox.</p>
      {create.error && <p class="error" role="alert">{create.error}</p>}
    </>
  );
}


function ApiKeys() {
  const list = useList<ApiKey>("api-keys", () => api().apiKeys.listPage({ limit: 100 }));
  const online = useOnline();
  const create = useCreate(list.reload);
  const [name, setName] = useState("");
  // Least privilege: a key reads until its maker ticks more (issue 43).
  const [scopes, setScopes] = useState<string[]>(["risks:read"]);
  const [expires, setExpires] = useState("");
  const [networks, setNetworks] = useState("");
  const [rolling, setRolling] = useState<string | null>(null);
  // A roll's answer and refusal are its own, shown beside its controls, not the creation form's.
  const rolled = useCreate(list.reload, "rolled");
  if (list.unavailable) return <Unavailable what="API key management" route="GET /v1/api-keys" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    const expiresAt = instant(expires);
    const allowedCidrs = networks.split(/[\s,]+/).filter((n) => n !== "");
    if (await create.run(() => api().apiKeys.create({
      name, scopes: scopes as ApiKey["scopes"], ...(expiresAt ? { expiresAt } : {}), ...(allowedCidrs.length ? { allowedCidrs } : {}),
    }), (k) => k.key)) {
      setName("");
      setExpires("");
      setNetworks("");
    }
  };
  // A roll answers the new key's secret: online-only, shown once like a creation's.
  const roll = async (k: ApiKey, expiresIn: number, newKeyExpires: string) => {
    const newKeyExpiresAt = instant(newKeyExpires);
    const params = newKeyExpiresAt ? { expiresIn, newKeyExpiresAt } : { expiresIn };
    if (await rolled.run(() => api().apiKeys.roll(k.id, params), (r) => r.key)) setRolling(null);
  };
  return (
    <>
      {create.secret && <Secret label="New API key" value={create.secret} onDone={create.clearSecret} />}
      {rolled.secret && <Secret label="New API key" value={rolled.secret} onDone={rolled.clearSecret} />}
      {list.error && <p class="error" role="alert">{list.error}</p>}
      <table>
        <thead><tr><th>Name</th><th>Scopes</th><th>Created</th><th>Expires</th><th>Last used</th><th /></tr></thead>
        <tbody>
          {list.page?.data.map((k) => (
            <tr key={k.id} class={k.revokedAt ? "revoked" : ""}>
              <td>{k.name || k.id}</td><td>{k.scopes.join(", ")}{k.allowedCidrs.length > 0 && <> · from {k.allowedCidrs.join(", ")}</>}</td>
              <td>{new Date(k.createdAt).toLocaleDateString()}</td>
              <td>{expiry(k)}</td>
              <td>{k.lastUsedAt ? new Date(k.lastUsedAt).toLocaleString() : "never"}</td>
              <td>{k.revokedAt ? "revoked" : (
                <>
                  {!k.rolledTo && !expired(k) && (rolling === k.id
                    ? <RollKey name={k.name || k.id} expiresAt={k.expiresAt} online={online} error={rolled.error} onRoll={(s, at) => void roll(k, s, at)} onCancel={() => setRolling(null)} />
                    : <button type="button" class="secondary" onClick={() => setRolling(k.id)}>Roll</button>)}{" "}
                  <AskFirst ask="Revoke" label={`Revoke ${k.name || k.id}?`} text="Revoke? Programs using it stop working." confirm="Confirm revoke"
                    onConfirm={() => void outbox().enqueue({ method: "DELETE", path: `/api-keys/${k.id}`, body: null, label: `Revoke API key ${k.name || k.id}` })} />
                </>
              )}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Create an API key</h2>
      <form class="row" onSubmit={submit} {...create.clears} aria-label="Create an API key">
        <label>Name<input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s} class="check">
              <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))} />
              {s}
            </label>
          ))}
        </fieldset>
        <label>Expires (optional)<input type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} /></label>
        <label>Allowed networks (optional)<input value={networks} placeholder="203.0.113.0/24, 2001:db8::/32"
          onInput={(e) => setNetworks(e.currentTarget.value)} /></label>
        <button type="submit" disabled={!online}>Create API key</button>
      </form>
      <OnlineOnly online={online} />
      {create.error && <p class="error" role="alert">{create.error}</p>}
    </>
  );
}

const expired = (k: ApiKey) => k.expiresAt !== null && new Date(k.expiresAt).getTime() <= Date.now();

/** expiry says when a key stops working: "never", its date, or that it has. */
function expiry(k: ApiKey): string {
  if (!k.expiresAt) return "never";
  const at = new Date(k.expiresAt).toLocaleString();
  return expired(k) ? `expired ${at}` : k.rolledTo ? `${at} (rolled)` : at;
}

/** The overlaps a roll offers: how long the old secret keeps working. */
const OVERLAPS: [string, number][] = [["stops now", 0], ["1 hour", 3600], ["1 day", 86400], ["7 days", 604800]];

/**
 * RollKey asks how long the old secret keeps working and when the new key
 * expires, then rolls. The new key's expiry starts as the old one's, so a key
 * made to lapse does not silently become one that never does (the API's default).
 */
function RollKey({ name, expiresAt, online, error, onRoll, onCancel }: {
  name: string; expiresAt: string | null; online: boolean; error: string; onRoll: (expiresIn: number, newKeyExpires: string) => void; onCancel: () => void;
}) {
  const [overlap, setOverlap] = useState(3600);
  const [newExpires, setNewExpires] = useState(expiresAt ? localValue(expiresAt) : "");
  return (
    <span role="group" aria-label={`Roll ${name}`}>
      <label>Old key works for<select value={overlap} onChange={(e) => setOverlap(Number(e.currentTarget.value))}>
        {OVERLAPS.map(([label, s]) => <option key={s} value={s}>{label}</option>)}
      </select></label>{" "}
      <label>New key expires (empty: never)<input type="datetime-local" value={newExpires} onInput={(e) => setNewExpires(e.currentTarget.value)} /></label>{" "}
      <button type="button" disabled={!online} onClick={() => onRoll(overlap, newExpires)}>Confirm roll</button>{" "}
      <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      {error && <p class="error" role="alert">{error}</p>}
    </span>
  );
}

function Webhooks() {
  return (
    <>
      <h2>Inbound sources</h2>
      <Sources />
      <h2>Outbound endpoints</h2>
      <Endpoints />
    </>
  );
}

function Sources() {
  const list = useList<Source>("webhook-sources", () => api().webhookSources.listPage({ limit: 100 }));
  const online = useOnline();
  const create = useCreate(list.reload);
  const [source, setSource] = useState("");
  if (list.unavailable) return <Unavailable what="Webhook sources" route="GET /v1/webhook-sources" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await create.run(() => api().webhookSources.create({ source }), (s) => s.secret)) setSource("");
  };
  return (
    <>
      {create.secret && <Secret label="Signing secret of the new source" value={create.secret} onDone={create.clearSecret} />}
      <ul>
        {list.page?.data.map((s) => (
          <li key={s.id}>
            <code>/webhooks/inbound/{s.source}</code>{" "}
            <AskFirst ask="Delete" askLabel={`Delete source ${s.source}`} label={`Delete source ${s.source}?`} confirm="Confirm delete"
              text="Delete? Webhooks sent to it are refused from then on (401), and its secret stops working."
              onConfirm={() => void outbox().enqueue({ method: "DELETE", path: `/webhook-sources/${s.id}`, body: null, label: `Delete webhook source ${s.source}` })} />
          </li>
        ))}
      </ul>
      <form class="row" onSubmit={submit} {...create.clears} aria-label="Add a webhook source">
        <label>Source name<input required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,99}" title="Letters, digits, dot, underscore and hyphen, starting with a letter or digit" value={source} onInput={(e) => setSource(e.currentTarget.value)} /></label>
        <button type="submit" disabled={!online}>Add source</button>
      </form>
      <OnlineOnly online={online} />
      {create.error && <p class="error" role="alert">{create.error}</p>}
    </>
  );
}

function Endpoints() {
  const list = useList<Endpoint>("webhook-endpoints", () => api().webhookEndpoints.listPage({ limit: 100 }));
  const online = useOnline();
  const create = useCreate(list.reload);
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>([...EVENT_TYPES]);
  const [shown, setShown] = useState<string | null>(null);
  const deliveries = useList<Delivery>(shown, () => api().webhookEndpoints.deliveries(shown!, { limit: 50 }));
  if (list.unavailable) return <Unavailable what="Webhook endpoints" route="GET /v1/webhook-endpoints" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await create.run(() => api().webhookEndpoints.create({ url, events } as Parameters<ReturnType<typeof api>["webhookEndpoints"]["create"]>[0]), (ep) => ep.secret)) setUrl("");
  };
  return (
    <>
      {create.secret && <Secret label="Signing secret of the new endpoint" value={create.secret} onDone={create.clearSecret} />}
      <ul>
        {list.page?.data.map((ep) => (
          <li key={ep.id}>
            <a href={`/admin/webhooks/${encodeURIComponent(ep.id)}`}><code>{ep.url}</code></a> {ep.events.join(", ")}
            {ep.disabledAt && <strong> disabled</strong>}{" "}
            <button type="button" class="secondary" onClick={() => setShown(shown === ep.id ? null : ep.id)}>Deliveries</button>{" "}
            <AskFirst ask="Delete" askLabel={`Delete endpoint ${ep.url}`} label={`Delete endpoint ${ep.url}?`} confirm="Confirm delete"
              text="Delete? No more events are sent to it."
              onConfirm={() => void outbox().enqueue({ method: "DELETE", path: `/webhook-endpoints/${ep.id}`, body: null, label: `Delete endpoint ${ep.url}` })} />
            {shown === ep.id && (
              <table>
                <DeliveryRows page={deliveries.page?.data} />
              </table>
            )}
          </li>
        ))}
      </ul>
      <form class="row" onSubmit={submit} {...create.clears} aria-label="Add a webhook endpoint">
        <label>URL<input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} /></label>
        <fieldset>
          <legend>Events</legend>
          {EVENT_TYPES.map((t) => (
            <label key={t} class="check">
              <input type="checkbox" checked={events.includes(t)} onChange={(e) => setEvents(e.currentTarget.checked ? [...events, t] : events.filter((x) => x !== t))} />
              {t}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={!online}>Add endpoint</button>
      </form>
      <OnlineOnly online={online} />
      {create.error && <p class="error" role="alert">{create.error}</p>}
    </>
  );
}

/** DeliveryRows is an endpoint's delivery log: one row per attempt or skipped event. */
function DeliveryRows({ page }: { page: Delivery[] | undefined }) {
  return (
    <>
      <thead><tr><th>Event</th><th>Attempt</th><th>Outcome</th><th>Status</th><th>Error</th><th>ms</th><th>When</th></tr></thead>
      <tbody>
        {page?.map((d) => (
          <tr key={d.eventId + d.attempt + d.createdAt}>
            <td><code>{d.eventId}</code></td><td>{d.attempt}</td><td>{d.outcome}</td><td>{d.status ?? ""}</td><td>{d.error ?? ""}</td>
            <td>{d.durationMs}</td><td>{new Date(d.createdAt).toLocaleString()}</td>
          </tr>
        ))}
      </tbody>
    </>
  );
}

/**
 * EndpointPage is one outbound endpoint: its state, its delivery log, and
 * disable/enable, ping and roll-secret. These are sent now, online, and the
 * page re-read: a ping's answer is only worth having now, and a roll's secret
 * is shown once.
 */
function EndpointPage({ id }: { id: string }) {
  const [ep, setEp] = useState<Endpoint | null>(null);
  const [error, setError] = useState("");
  const [note, setNote] = useState("");
  const [overlap, setOverlap] = useState(86400);
  const online = useOnline();
  const deliveries = useList<Delivery>(`deliveries-${id}`, () => api().webhookEndpoints.deliveries(id, { limit: 50 }));
  const load = () => api().webhookEndpoints.get(id).then(setEp, (err: unknown) => setError(explain(err)));
  useEffect(() => void load(), [id]);
  const roll = useCreate(() => void load(), "rolled");
  const once = useOneAtATime();
  const act = (what: () => Promise<unknown>) => void once(async () => {
    setError("");
    setNote("");
    try {
      await what();
      await load();
      deliveries.reload();
    } catch (err) {
      setError(err instanceof RiskApiError ? explain(err) : "Cannot reach the server; nothing changed.");
    }
  });
  const ping = () => act(async () => {
    const r = await api().webhookEndpoints.ping(id);
    setNote(r.delivered ? `Ping delivered: ${r.status} in ${r.durationMs} ms` : `Ping failed: ${r.error ?? ""}${r.status ? ` (${r.status})` : ""} after ${r.durationMs} ms`);
  });
  return (
    <section aria-label="Webhook endpoint">
      <p><a href="/admin/webhooks">All webhooks</a></p>
      {error && <p class="error" role="alert">{error}</p>}
      {ep && (
        <>
          <h2><code>{ep.url}</code></h2>
          <p data-testid="endpoint-state">{ep.disabledAt ? `Disabled since ${new Date(ep.disabledAt).toLocaleString()}` : "Enabled"}
            {ep.failingSince && !ep.disabledAt && ` · failing since ${new Date(ep.failingSince).toLocaleString()}`}
            {ep.previousSecretExpiresAt && ` · previous secret signs until ${new Date(ep.previousSecretExpiresAt).toLocaleString()}`}</p>
          {ep.description && <p>{ep.description}</p>}
          <p>Events: {ep.events.join(", ")}</p>
          <div class="row">
            {ep.disabledAt
              ? <button type="button" disabled={!online} onClick={() => act(() => api().webhookEndpoints.enable(id))}>Enable</button>
              : <button type="button" disabled={!online} onClick={() => act(() => api().webhookEndpoints.disable(id))}>Disable</button>}{" "}
            <button type="button" disabled={!online} onClick={ping}>Ping</button>
          </div>
          {note && <p role="status" data-testid="ping-result">{note}</p>}
          {roll.secret && <Secret label="New signing secret" value={roll.secret} onDone={roll.clearSecret} />}
          <form class="row" aria-label="Roll the signing secret" onSubmit={(e) => {
            e.preventDefault();
            void roll.run(() => api().webhookEndpoints.rollSecret(id, overlap), (r) => r.secret);
          }}>
            <label>Old secret signs for<select value={overlap} onChange={(e) => setOverlap(Number(e.currentTarget.value))}>
              {OVERLAPS.map(([label, s]) => <option key={s} value={s}>{label}</option>)}
            </select></label>
            <button type="submit" disabled={!online}>Roll secret</button>
          </form>
          {roll.error && <p class="error" role="alert">{roll.error}</p>}
          <h3>Deliveries</h3>
          {deliveries.error && <p class="error" role="alert">{deliveries.error}</p>}
          <table aria-label="Deliveries"><DeliveryRows page={deliveries.page?.data} /></table>
        </>
      )}
    </section>
  );
}
