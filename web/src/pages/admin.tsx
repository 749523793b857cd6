/**
 * Admin pages: users, API keys, webhook sources and endpoints. Creating
 * anything whose response carries a secret (a key, a source, an endpoint) or
 * a password (a user) is online-only: it is sent now or not at all, and never
 * kept in the outbox. Role changes and removals are ordinary queued changes.
 */
import { useState } from "preact/hooks";
import { ApiError, request } from "../api";
import { isAdmin, type Session } from "../session";
import { outbox, useOnline } from "../state";
import { OnlineOnly, Secret, Unavailable, useList } from "./common";

/** AdminPage picks the admin section from the path. */
export function AdminPage({ path, session }: { path: string; session: Session }) {
  if (!isAdmin(session)) return <p class="error" role="alert">Only admins manage users, API keys and webhooks.</p>;
  return (
    <section>
      <h1>Admin</h1>
      <nav class="tabs" aria-label="Admin">
        <a href="/admin/users" aria-current={path === "/admin/users" ? "page" : undefined}>Users</a>
        <a href="/admin/api-keys" aria-current={path === "/admin/api-keys" ? "page" : undefined}>API keys</a>
        <a href="/admin/webhooks" aria-current={path === "/admin/webhooks" ? "page" : undefined}>Webhooks</a>
      </nav>
      {path === "/admin/api-keys" ? <ApiKeys /> : path === "/admin/webhooks" ? <Webhooks /> : <Users session={session} />}
    </section>
  );
}

/**
 * useCreate sends an online-only create and keeps its error and, for routes
 * that answer with a secret, the secret to show once. After a success it
 * re-reads the list.
 */
function useCreate(reload: () => void) {
  const [error, setError] = useState("");
  const [secret, setSecret] = useState("");
  const run = async (path: string, body: unknown, secretOf?: (created: Record<string, unknown>) => unknown): Promise<boolean> => {
    setError("");
    try {
      const created = await request<Record<string, unknown>>("POST", path, body);
      if (secretOf) setSecret(String(secretOf(created) ?? ""));
      reload();
      return true;
    } catch (err) {
      setError(err instanceof ApiError ? `${err.status} ${err.code}: ${err.detail}` : "Cannot reach the server; nothing was created.");
      return false;
    }
  };
  return { error, secret, clearSecret: () => setSecret(""), run };
}

interface User { id: string; email: string; role: "admin" | "member"; createdAt: string }

function Users({ session }: { session: Session }) {
  const list = useList<User>("/v1/users?limit=100");
  const online = useOnline();
  const create = useCreate(list.reload);
  const [f, setF] = useState({ email: "", password: "", role: "member" });
  if (list.unavailable) return <Unavailable what="User management" route="GET /v1/users" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await create.run("/v1/users", f)) setF({ email: "", password: "", role: "member" });
  };
  return (
    <>
      {list.error && <p class="error" role="alert">{list.error}</p>}
      <table>
        <thead><tr><th>Email</th><th>Role</th><th>Since</th><th /></tr></thead>
        <tbody>
          {list.page?.data.map((u) => (
            <tr key={u.id}>
              <td>{u.email}</td>
              <td>
                <select aria-label={`Role of ${u.email}`} value={u.role} onChange={(e) => void outbox().enqueue({
                  method: "PATCH", path: `/v1/users/${u.id}`, body: { kind: "json", json: { role: e.currentTarget.value } },
                  label: `Make ${u.email} ${e.currentTarget.value}`,
                })}>
                  <option value="admin">admin</option><option value="member">member</option>
                </select>
              </td>
              <td>{new Date(u.createdAt).toLocaleDateString()}</td>
              <td>
                {u.id !== session.me?.user.id && (
                  <button type="button" class="danger" onClick={() => void outbox().enqueue({ method: "DELETE", path: `/v1/users/${u.id}`, body: null, label: `Remove user ${u.email}` })}>
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Add a user</h2>
      <form class="row" onSubmit={submit} aria-label="Add a user">
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

interface ApiKey { id: string; name: string; scopes: string[]; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }
const SCOPES = ["risks:read", "risks:write", "requests:read", "events:read"];

function ApiKeys() {
  const list = useList<ApiKey>("/v1/api-keys?limit=100");
  const online = useOnline();
  const create = useCreate(list.reload);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<string[]>(["risks:read", "risks:write"]);
  if (list.unavailable) return <Unavailable what="API key management" route="GET /v1/api-keys" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await create.run("/v1/api-keys", { name, scopes }, (k) => k.key)) setName("");
  };
  return (
    <>
      {create.secret && <Secret label="New API key" value={create.secret} onDone={create.clearSecret} />}
      {list.error && <p class="error" role="alert">{list.error}</p>}
      <table>
        <thead><tr><th>Name</th><th>Scopes</th><th>Created</th><th>Last used</th><th /></tr></thead>
        <tbody>
          {list.page?.data.map((k) => (
            <tr key={k.id} class={k.revokedAt ? "revoked" : ""}>
              <td>{k.name || k.id}</td><td>{k.scopes.join(", ")}</td>
              <td>{new Date(k.createdAt).toLocaleDateString()}</td>
              <td>{k.lastUsedAt ? new Date(k.lastUsedAt).toLocaleString() : "never"}</td>
              <td>{k.revokedAt ? "revoked" : (
                <button type="button" class="danger" onClick={() => void outbox().enqueue({ method: "DELETE", path: `/v1/api-keys/${k.id}`, body: null, label: `Revoke API key ${k.name || k.id}` })}>Revoke</button>
              )}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Create an API key</h2>
      <form class="row" onSubmit={submit} aria-label="Create an API key">
        <label>Name<input required value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s} class="check">
              <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))} />
              {s}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={!online}>Create API key</button>
      </form>
      <OnlineOnly online={online} />
      {create.error && <p class="error" role="alert">{create.error}</p>}
    </>
  );
}

interface Source { id: string; source: string; createdAt: string }
interface Endpoint { id: string; url: string; events: string[]; createdAt: string }
interface Delivery { eventId: string; attempt: number; status: number | null; error: string | null; durationMs: number; createdAt: string }
const EVENT_TYPES = ["risk.created", "risk.updated", "risk.deleted", "attachment.created", "attachment.deleted"];

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
  const list = useList<Source>("/v1/webhook-sources?limit=100");
  const online = useOnline();
  const create = useCreate(list.reload);
  const [source, setSource] = useState("");
  if (list.unavailable) return <Unavailable what="Webhook sources" route="GET /v1/webhook-sources" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await create.run("/v1/webhook-sources", { source }, (s) => s.secret)) setSource("");
  };
  return (
    <>
      {create.secret && <Secret label="Signing secret of the new source" value={create.secret} onDone={create.clearSecret} />}
      <ul>
        {list.page?.data.map((s) => (
          <li key={s.id}>
            <code>/webhooks/inbound/{s.source}</code>{" "}
            <button type="button" class="danger" onClick={() => void outbox().enqueue({ method: "DELETE", path: `/v1/webhook-sources/${s.id}`, body: null, label: `Delete webhook source ${s.source}` })}>Delete</button>
          </li>
        ))}
      </ul>
      <form class="row" onSubmit={submit} aria-label="Add a webhook source">
        <label>Source name<input required pattern="[A-Za-z0-9._-]+" value={source} onInput={(e) => setSource(e.currentTarget.value)} /></label>
        <button type="submit" disabled={!online}>Add source</button>
      </form>
      <OnlineOnly online={online} />
      {create.error && <p class="error" role="alert">{create.error}</p>}
    </>
  );
}

function Endpoints() {
  const list = useList<Endpoint>("/v1/webhook-endpoints?limit=100");
  const online = useOnline();
  const create = useCreate(list.reload);
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<string[]>(EVENT_TYPES);
  const [shown, setShown] = useState<string | null>(null);
  const deliveries = useList<Delivery>(shown ? `/v1/webhook-endpoints/${shown}/deliveries?limit=50` : null);
  if (list.unavailable) return <Unavailable what="Webhook endpoints" route="GET /v1/webhook-endpoints" />;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await create.run("/v1/webhook-endpoints", { url, events }, (ep) => ep.secret)) setUrl("");
  };
  return (
    <>
      {create.secret && <Secret label="Signing secret of the new endpoint" value={create.secret} onDone={create.clearSecret} />}
      <ul>
        {list.page?.data.map((ep) => (
          <li key={ep.id}>
            <code>{ep.url}</code> {ep.events.join(", ")}{" "}
            <button type="button" class="secondary" onClick={() => setShown(shown === ep.id ? null : ep.id)}>Deliveries</button>{" "}
            <button type="button" class="danger" onClick={() => void outbox().enqueue({ method: "DELETE", path: `/v1/webhook-endpoints/${ep.id}`, body: null, label: `Delete endpoint ${ep.url}` })}>Delete</button>
            {shown === ep.id && (
              <table>
                <thead><tr><th>Event</th><th>Attempt</th><th>Status</th><th>Error</th><th>ms</th><th>When</th></tr></thead>
                <tbody>
                  {deliveries.page?.data.map((d) => (
                    <tr key={d.eventId + d.attempt}>
                      <td><code>{d.eventId}</code></td><td>{d.attempt}</td><td>{d.status ?? ""}</td><td>{d.error ?? ""}</td>
                      <td>{d.durationMs}</td><td>{new Date(d.createdAt).toLocaleString()}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </li>
        ))}
      </ul>
      <form class="row" onSubmit={submit} aria-label="Add a webhook endpoint">
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
