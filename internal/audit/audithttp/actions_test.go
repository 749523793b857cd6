package audithttp_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/web"
)

// want is the one entry a route's request must record; action "" means none.
type want struct {
	action    string
	actorType string
	actorID   string
	email     string // the actor's email, users only
	targetID  string // "" only where the target has no ID (session.failed)
	// changes, when set, must equal the entry's changes as JSON.
	changes string
	// also are the actions of the other entries the request records, one each
	// (a review also changes its risk: risk.updated).
	also []string
}

// fixture is what a case's request works on; secrets collects every secret and
// password the cases send or receive, none of which may reach the log.
type fixture struct {
	env     *apitest.Env
	a       *admin
	secrets *[]string
	mark    *string // the tenant's newest entry before the case's request (begin)
}

// writeCase makes one request to its route and says which entry it must record.
type writeCase func(t *testing.T, f fixture) (*apitest.Response, want)

var echoParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// writeRoutes lists every route of the router that may change something (any
// method but GET), as "METHOD /path/{param}".
func writeRoutes(e *echo.Echo) []string {
	var out []string
	for _, r := range e.Routes() {
		if r.Method == http.MethodGet || r.Method == echo.RouteNotFound || r.Name == web.RouteName {
			continue
		}
		out = append(out, r.Method+" "+echoParam.ReplaceAllString(r.Path, "{$1}"))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestEveryWriteRouteRecordsItsEntry: every route of the router that changes
// something records exactly one entry with the right actor, target and changes (or,
// for the two that change no tenant data, none), with the request's id, address and
// user agent; a route without a case here fails the test. Afterwards no entry holds
// any password or secret the cases used.
func TestEveryWriteRouteRecordsItsEntry(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, allowPrivate)
	cases := writeCases()
	routes := writeRoutes(env.App.Echo)
	for _, r := range routes {
		if cases[r] == nil {
			t.Errorf("route %s changes something but has no audit case here: add one (and its entry)", r)
		}
	}
	for r := range cases {
		if !slices.Contains(routes, r) {
			t.Errorf("case %s names no route of the router", r)
		}
	}
	var secrets []string
	for i, r := range routes {
		run := cases[r]
		if run == nil {
			continue
		}
		t.Run(r, func(t *testing.T) {
			a := newAdmin(t, env, fmt.Sprintf("Acme %d", i))
			secrets = append(secrets, a.Key, a.ReadKey, a.Token, a.Password)
			var mark string
			f := fixture{env: env, a: a, secrets: &secrets, mark: &mark}
			res, w := run(t, f)
			got := entriesAfter(t, env, a.ID, mark)
			check(t, res, w, got)
		})
	}
	assertNoSecrets(t, env, secrets, 3*len(routes))
}

// endpoint creates an endpoint of the case's tenant and returns its ID.
func (f fixture) endpoint(t *testing.T) string {
	t.Helper()
	m := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Bearer: f.a.Token,
		JSON: map[string]any{"url": "http://127.0.0.1:9/hook"}}).Expect(http.StatusCreated).Map()
	*f.secrets = append(*f.secrets, m["secret"].(string))
	return m["id"].(string)
}

// begin records where the case's own request starts in the tenant's log: call it
// after the case's setup, just before the request.
func (f fixture) begin(t *testing.T) {
	t.Helper()
	*f.mark = lastID(t, f.env, f.a.ID)
}

func check(t *testing.T, res *apitest.Response, w want, got []*audit.Entry) {
	t.Helper()
	if w.action == "" {
		if len(got) != 0 {
			t.Fatalf("recorded %d entries, want none: %s", len(got), jsonOf(t, got))
		}
		return
	}
	var others []string
	got = slices.DeleteFunc(slices.Clone(got), func(e *audit.Entry) bool {
		if e.Action != w.action && slices.Contains(w.also, e.Action) {
			others = append(others, e.Action)
			return true
		}
		return false
	})
	slices.Sort(others)
	if len(got) != 1 || !slices.Equal(others, slices.Sorted(slices.Values(w.also))) {
		t.Fatalf("recorded %d entries and %v, want exactly one %s and %v: %s", len(got), others, w.action, w.also, jsonOf(t, got))
	}
	e := got[0]
	targetType, _, _ := strings.Cut(w.action, ".")
	if e.Action != w.action || e.Actor.Type != w.actorType || e.Actor.ID != w.actorID || e.Actor.Email != w.email ||
		e.Target.Type != targetType || (w.targetID != "" && e.Target.ID != w.targetID) {
		t.Errorf("entry %s, want action %s by %s %s <%s> on %s %s", jsonOf(t, e), w.action, w.actorType, w.actorID,
			w.email, targetType, w.targetID)
	}
	if w.changes != "" {
		if g := jsonOf(t, e.Changes); g != w.changes {
			t.Errorf("changes %s, want %s", g, w.changes)
		}
	}
	if rid := res.Header().Get(echo.HeaderXRequestID); e.RequestID != rid || rid == "" {
		t.Errorf("requestId %q, want the response's %q", e.RequestID, rid)
	}
	if e.IP != "192.0.2.1" || e.UserAgent != "audit-test/1.0" {
		t.Errorf("ip %q, userAgent %q: want the request's 192.0.2.1 and audit-test/1.0", e.IP, e.UserAgent)
	}
}

// ua is the User-Agent every case's request carries.
var ua = http.Header{"User-Agent": {"audit-test/1.0"}}

func with(h http.Header) http.Header {
	out := ua.Clone()
	for k, v := range h {
		out[k] = v
	}
	return out
}

func writeCases() map[string]writeCase {
	cs := map[string]writeCase{
		// Signing in records session.created by the user who signed in.
		"POST /v1/sessions": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/sessions", Header: ua,
				JSON: map[string]string{"email": f.a.Email, "password": f.a.Password}}).Expect(http.StatusCreated)
			return res, want{action: "session.created", actorType: "user", actorID: f.a.UserID, email: f.a.Email}
		},
		// Signing out ends a session: no action of the contract's, so no entry.
		"DELETE /v1/sessions": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			return f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/sessions", Bearer: f.a.Token, Header: ua}).
				Expect(http.StatusNoContent), want{}
		},
		// The MCP endpoint: opening and closing a session change no tenant data; its
		// tools' writes are their /v2 routes' and record their entries (internal/mcpserver).
		"POST /mcp": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			return mcpInitialize(t, f), want{}
		},
		"DELETE /mcp": func(t *testing.T, f fixture) (*apitest.Response, want) {
			session := mcpInitialize(t, f).Header().Get("Mcp-Session-Id")
			f.begin(t)
			return f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/mcp", Bearer: f.a.Key,
				Header: http.Header{"Mcp-Session-Id": {session}, "User-Agent": ua["User-Agent"]}}).Expect(http.StatusNoContent), want{}
		},
		// A redelivery queues deliveries of an event; it changes no tenant data.
		"POST /v1/events/{id}/redeliver": func(t *testing.T, f fixture) (*apitest.Response, want) {
			createRisk(t, f.env, f.a.Key, "evented")
			var evs struct{ Data []struct{ ID string } }
			f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events", Bearer: f.a.Key}).Expect(http.StatusOK).Decode(&evs)
			f.begin(t)
			return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/events/" + evs.Data[0].ID + "/redeliver",
				Bearer: f.a.Token, Header: ua}).Expect(http.StatusAccepted), want{}
		},
		"POST /v1/me/password": func(t *testing.T, f fixture) (*apitest.Response, want) {
			next := "Marker-New-Pa55word"
			*f.secrets = append(*f.secrets, next)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/me/password", Bearer: f.a.Token, Header: ua,
				JSON: map[string]string{"currentPassword": f.a.Password, "newPassword": next}}).Expect(http.StatusNoContent)
			return res, want{action: "user.password_changed", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: f.a.UserID, changes: `{"password":"changed"}`}
		},
		"POST /v1/users": func(t *testing.T, f fixture) (*apitest.Response, want) {
			pw := "Marker-User-Pa55word"
			*f.secrets = append(*f.secrets, pw)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/users", Bearer: f.a.Token, Header: ua,
				JSON: map[string]string{"email": "new-" + f.a.ID[4:12] + "@example.com", "password": pw, "role": "member"}}).
				Expect(http.StatusCreated)
			return res, want{action: "user.created", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: res.Map()["id"].(string),
				changes:  fmt.Sprintf(`{"email":{"from":null,"to":"new-%s@example.com"},"role":{"from":null,"to":"member"}}`, f.a.ID[4:12])}
		},
		"PATCH /v1/users/{id}": func(t *testing.T, f fixture) (*apitest.Response, want) {
			u := f.env.User(f.a.ID, tenants.RoleMember)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/users/" + u.ID, Bearer: f.a.Token, Header: ua,
				JSON: map[string]string{"role": "admin"}}).Expect(http.StatusOK)
			return res, want{action: "user.role_changed", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: u.ID, changes: `{"role":{"from":"member","to":"admin"}}`}
		},
		"DELETE /v1/users/{id}": func(t *testing.T, f fixture) (*apitest.Response, want) {
			u := f.env.User(f.a.ID, tenants.RoleMember)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/users/" + u.ID, Bearer: f.a.Token, Header: ua}).
				Expect(http.StatusNoContent)
			return res, want{action: "user.deleted", actorType: "user", actorID: f.a.UserID, email: f.a.Email, targetID: u.ID,
				changes: fmt.Sprintf(`{"email":{"from":%q,"to":null},"role":{"from":"member","to":null}}`, u.Email)}
		},
		"POST /v1/api-keys": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys", Bearer: f.a.Token, Header: ua,
				JSON: map[string]any{"name": "ci", "scopes": []string{"risks:read"}}}).Expect(http.StatusCreated)
			m := res.Map()
			*f.secrets = append(*f.secrets, m["key"].(string))
			if cb, _ := m["createdBy"].(map[string]any); cb["type"] != "user" || cb["id"] != f.a.UserID {
				t.Errorf("createdBy %v, want the admin %s", m["createdBy"], f.a.UserID)
			}
			return res, want{action: "api_key.created", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: m["id"].(string), changes: fmt.Sprintf(`{"allowedCidrs":{"from":null,"to":[]},"createdBy":{"from":null,"to":{"type":"user","id":%q}},`+
					`"mode":{"from":null,"to":"live"},"name":{"from":null,"to":"ci"},"scopes":{"from":null,"to":["risks:read"]}}`,
					f.a.UserID)}
		},
		// Erasing the sandbox is recorded in the tenant's live log, which outlives it;
		// its changes count what was erased (docs/sandboxes.md).
		"DELETE /v1/sandbox/data": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/risks", Bearer: f.a.Token,
				Header: http.Header{"Riskapi-Mode": {"test"}}, JSON: map[string]any{"title": "in the sandbox"}}).
				Expect(http.StatusCreated)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/sandbox/data", Bearer: f.a.Token,
				Header: ua}).Expect(http.StatusOK)
			if m := res.Map(); m["risks"] != 1.0 || m["id"] != "sbx_"+f.a.ID[4:] || m["livemode"] != false {
				t.Errorf("erased %v, want the sandbox's one risk", m)
			}
			return res, want{action: "sandbox.data_deleted", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: "sbx_" + f.a.ID[4:]}
		},
		"POST /v1/api-keys/{id}/roll": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/api-keys/" + f.a.ReadKeyID + "/roll", Bearer: f.a.Token,
				Header: ua, JSON: map[string]any{"expiresIn": 60}}).Expect(http.StatusCreated)
			m := res.Map()
			*f.secrets = append(*f.secrets, m["key"].(string))
			// The roll's own entry; the new key's api_key.created is the same unit of work's.
			got := entriesAfter(t, f.env, f.a.ID, *f.mark)
			if len(got) != 2 || got[0].Action == got[1].Action {
				t.Fatalf("roll recorded %s, want api_key.rolled and api_key.created", jsonOf(t, got))
			}
			*f.mark = lastID(t, f.env, f.a.ID)
			prev := m["previous"].(map[string]any)
			return res, want{action: "", targetID: prev["id"].(string)}
		},
		"DELETE /v1/api-keys/{id}": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/api-keys/" + f.a.ReadKeyID, Bearer: f.a.Token,
				Header: ua}).Expect(http.StatusNoContent)
			return res, want{action: "api_key.revoked", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: f.a.ReadKeyID}
		},
		"POST /v1/webhook-sources": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-sources", Bearer: f.a.Token, Header: ua,
				JSON: map[string]string{"source": "scan-" + f.a.ID[4:16]}}).Expect(http.StatusCreated)
			m := res.Map()
			*f.secrets = append(*f.secrets, m["secret"].(string))
			return res, want{action: "webhook_source.created", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: m["id"].(string)}
		},
		"DELETE /v1/webhook-sources/{id}": func(t *testing.T, f fixture) (*apitest.Response, want) {
			src, err := f.env.App.Webhooks.CreateSource(context.Background(), f.a.ID, "gone-"+f.a.ID[4:16])
			if err != nil {
				t.Fatal(err)
			}
			*f.secrets = append(*f.secrets, src.Secret)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/webhook-sources/" + src.ID, Bearer: f.a.Token,
				Header: ua}).Expect(http.StatusNoContent)
			return res, want{action: "webhook_source.deleted", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: src.ID}
		},
		"POST /v1/webhook-endpoints": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Bearer: f.a.Token, Header: ua,
				JSON: map[string]any{"url": "http://127.0.0.1:9/hook"}}).Expect(http.StatusCreated)
			m := res.Map()
			*f.secrets = append(*f.secrets, m["secret"].(string))
			return res, want{action: "webhook_endpoint.created", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: m["id"].(string), changes: `{"apiVersion":{"from":null,"to":"2026-12-01"},"description":{"from":null,"to":""},"events":{"from":null,"to":["*"]},"url":{"from":null,"to":"http://127.0.0.1:9/hook"}}`}
		},
		"PATCH /v1/webhook-endpoints/{id}": func(t *testing.T, f fixture) (*apitest.Response, want) {
			id := f.endpoint(t)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/webhook-endpoints/" + id, Bearer: f.a.Token,
				Header: ua, JSON: map[string]any{"description": "billing"}}).Expect(http.StatusOK)
			return res, want{action: "webhook_endpoint.updated", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: id, changes: `{"description":{"from":"","to":"billing"}}`}
		},
		"POST /v1/webhook-endpoints/{id}/disable": func(t *testing.T, f fixture) (*apitest.Response, want) {
			id := f.endpoint(t)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/disable", Bearer: f.a.Token,
				Header: ua}).Expect(http.StatusOK)
			return res, want{action: "webhook_endpoint.disabled", actorType: "user", actorID: f.a.UserID, email: f.a.Email, targetID: id}
		},
		"POST /v1/webhook-endpoints/{id}/enable": func(t *testing.T, f fixture) (*apitest.Response, want) {
			id := f.endpoint(t)
			f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/disable", Bearer: f.a.Token}).Expect(http.StatusOK)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/enable", Bearer: f.a.Token,
				Header: ua}).Expect(http.StatusOK)
			return res, want{action: "webhook_endpoint.enabled", actorType: "user", actorID: f.a.UserID, email: f.a.Email, targetID: id}
		},
		"POST /v1/webhook-endpoints/{id}/ping": func(t *testing.T, f fixture) (*apitest.Response, want) {
			id := f.endpoint(t)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/ping", Bearer: f.a.Token,
				Header: ua}).Expect(http.StatusOK)
			return res, want{} // a ping changes nothing
		},
		"POST /v1/webhook-endpoints/{id}/roll-secret": func(t *testing.T, f fixture) (*apitest.Response, want) {
			id := f.endpoint(t)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints/" + id + "/roll-secret", Bearer: f.a.Token,
				Header: ua, JSON: map[string]any{"expiresIn": 60}}).Expect(http.StatusOK)
			*f.secrets = append(*f.secrets, res.Map()["secret"].(string))
			return res, want{action: "webhook_endpoint.secret_rolled", actorType: "user", actorID: f.a.UserID, email: f.a.Email, targetID: id}
		},
		"POST /v1/tenant/api-version": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/tenant/api-version", Bearer: f.a.Token, Header: ua,
				JSON: map[string]any{"version": "2027-01-15"}}).Expect(http.StatusOK)
			return res, want{action: "tenant.api_version_moved", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: f.a.ID, changes: `{"apiVersion":{"from":"2026-12-01","to":"2027-01-15"}}`}
		},
		"PATCH /v1/tenant": func(t *testing.T, f fixture) (*apitest.Response, want) {
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPatch, Path: "/v1/tenant", Bearer: f.a.Token, Header: ua,
				JSON: map[string]any{"riskAppetite": 12}}).Expect(http.StatusOK)
			return res, want{action: "tenant.appetite_changed", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: f.a.ID, changes: `{"riskAppetite":{"from":null,"to":12}}`}
		},
		"DELETE /v1/webhook-endpoints/{id}": func(t *testing.T, f fixture) (*apitest.Response, want) {
			m := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Bearer: f.a.Token,
				JSON: map[string]any{"url": "http://127.0.0.1:9/gone"}}).Expect(http.StatusCreated).Map()
			*f.secrets = append(*f.secrets, m["secret"].(string))
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/webhook-endpoints/" + m["id"].(string),
				Bearer: f.a.Token, Header: ua}).Expect(http.StatusNoContent)
			return res, want{action: "webhook_endpoint.deleted", actorType: "user", actorID: f.a.UserID, email: f.a.Email,
				targetID: m["id"].(string)}
		},
		"POST /webhooks/inbound/{source}": func(t *testing.T, f fixture) (*apitest.Response, want) {
			src, err := f.env.App.Webhooks.CreateSource(context.Background(), f.a.ID, "in-"+f.a.ID[4:16])
			if err != nil {
				t.Fatal(err)
			}
			*f.secrets = append(*f.secrets, src.Secret)
			body := `{"id":"evt_1","type":"finding.created","data":{"externalId":"F-1","title":"Open bucket"}}`
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/webhooks/inbound/" + src.Name, Body: body,
				Header: with(http.Header{webhooks.SignatureHeader: {webhooks.Sign(src.Secret, f.env.Clock.Now(), []byte(body))}})}).
				Expect(http.StatusOK)
			return res, want{action: "risk.created", actorType: "webhook_source", actorID: src.ID}
		},
	}
	for _, v := range []string{"v1", "v2"} {
		addRiskCases(cs, v)
		addFollowupCases(cs, v)
	}
	return cs
}

// addRiskCases adds the risk and attachment routes under version v, called with the
// admin's session (v1) or the tenant's API key (v2).
func addFollowupCases(cs map[string]writeCase, v string) {
	who := func(f fixture) (bearer string, w want) {
		if v == "v1" {
			return f.a.Token, want{actorType: "user", actorID: f.a.UserID, email: f.a.Email}
		}
		return f.a.Key, want{actorType: "api_key", actorID: f.a.KeyID}
	}
	cs["POST /"+v+"/risks/{id}/reviews"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		id := createRisk(t, f.env, f.a.Key, "reviewed")
		f.begin(t)
		res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/" + v + "/risks/" + id + "/reviews", Bearer: bearer,
			Header: ua, JSON: map[string]any{"outcome": "unchanged"}}).Expect(http.StatusCreated)
		w.action, w.targetID = "review.created", res.Map()["id"].(string)
		return res, w
	}
	cs["POST /"+v+"/risks/{id}/actions"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		id := createRisk(t, f.env, f.a.Key, "treated")
		f.begin(t)
		res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/" + v + "/risks/" + id + "/actions", Bearer: bearer,
			Header: ua, JSON: map[string]any{"title": "fix", "ownerId": f.a.UserID}}).Expect(http.StatusCreated)
		w.action, w.targetID = "action.created", res.Map()["id"].(string)
		return res, w
	}
	cs["PATCH /"+v+"/actions/{id}"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		id := createRisk(t, f.env, f.a.Key, "treated")
		act := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/actions", Bearer: f.a.Key,
			JSON: map[string]any{"title": "fix", "ownerId": f.a.UserID}}).Expect(http.StatusCreated).Map()["id"].(string)
		f.begin(t)
		res := f.env.Do(apitest.Request{Method: http.MethodPatch, Path: "/" + v + "/actions/" + act, Bearer: bearer,
			Header: ua, JSON: map[string]any{"status": "done"}}).Expect(http.StatusOK)
		w.action, w.targetID, w.changes = "action.updated", act, `{"status":{"from":"open","to":"done"}}`
		return res, w
	}
	cs["POST /"+v+"/risks/{id}/acceptances"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		id := createRisk(t, f.env, f.a.Key, "accepted")
		f.begin(t)
		res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/" + v + "/risks/" + id + "/acceptances", Bearer: bearer,
			Header: ua, JSON: map[string]any{"justification": "cheap", "validUntil": time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")}}).
			Expect(http.StatusCreated)
		w.action, w.targetID = "acceptance.created", res.Map()["id"].(string)
		return res, w
	}
	if v != "v1" {
		return
	}
	for _, verb := range []string{"approve", "reject"} {
		cs["POST /v1/acceptances/{id}/"+verb] = func(t *testing.T, f fixture) (*apitest.Response, want) {
			id := createRisk(t, f.env, f.a.Key, "accepted")
			// Requested by the key: the signed-in admin may decide it.
			acc := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + id + "/acceptances", Bearer: f.a.Key,
				JSON: map[string]any{"justification": "cheap", "validUntil": time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")}}).
				Expect(http.StatusCreated).Map()["id"].(string)
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/acceptances/" + acc + "/" + verb, Bearer: f.a.Token,
				Header: ua, JSON: map[string]any{"note": "ok"}}).Expect(http.StatusOK)
			w := want{actorType: "user", actorID: f.a.UserID, email: f.a.Email, action: "acceptance." + verb + "d", targetID: acc}
			if verb == "reject" {
				w.action = "acceptance.rejected"
			} else {
				w.action, w.also = "acceptance.approved", []string{"risk.updated"}
			}
			return res, w
		}
	}
}

func addRiskCases(cs map[string]writeCase, v string) {
	who := func(f fixture) (bearer string, w want) {
		if v == "v1" {
			return f.a.Token, want{actorType: "user", actorID: f.a.UserID, email: f.a.Email}
		}
		return f.a.Key, want{actorType: "api_key", actorID: f.a.KeyID}
	}
	cs["POST /"+v+"/risks"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		f.begin(t)
		res := f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/" + v + "/risks", Bearer: bearer, Header: ua,
			JSON: map[string]any{"title": "DPA"}}).Expect(http.StatusCreated)
		w.action, w.targetID = "risk.created", res.Map()["id"].(string)
		return res, w
	}
	for _, m := range []string{http.MethodPatch, http.MethodPut} {
		cs[m+" /"+v+"/risks/{id}"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
			bearer, w := who(f)
			id := createRisk(t, f.env, f.a.Key, "before")
			f.begin(t)
			res := f.env.Do(apitest.Request{Method: m, Path: "/" + v + "/risks/" + id, Bearer: bearer, Header: ua,
				JSON: map[string]any{"title": "after"}}).Expect(http.StatusOK)
			w.action, w.targetID, w.changes = "risk.updated", id, `{"title":{"from":"before","to":"after"}}`
			return res, w
		}
	}
	cs["DELETE /"+v+"/risks/{id}"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		id := createRisk(t, f.env, f.a.Key, "doomed")
		f.begin(t)
		res := f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/" + v + "/risks/" + id, Bearer: bearer, Header: ua}).
			Expect(http.StatusNoContent)
		w.action, w.targetID = "risk.deleted", id
		return res, w
	}
	cs["POST /"+v+"/risks/{id}/attachments"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		id := createRisk(t, f.env, f.a.Key, "with a file")
		body, ct := apitest.Multipart("", apitest.FilePart("file", "a.txt", "text/plain", "hello"))
		f.begin(t)
		res := f.env.Upload("/"+v+"/risks/"+id+"/attachments", bearer, ua, body, ct).Expect(http.StatusCreated)
		w.action, w.targetID = "attachment.created", res.Map()["id"].(string)
		return res, w
	}
	cs["DELETE /"+v+"/attachments/{id}"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		id := createRisk(t, f.env, f.a.Key, "with a file to delete")
		body, ct := apitest.Multipart("", apitest.FilePart("file", "a.txt", "text/plain", "hello"))
		att := f.env.Upload("/v2/risks/"+id+"/attachments", f.a.Key, nil, body, ct).Expect(http.StatusCreated).Map()["id"].(string)
		f.begin(t)
		res := f.env.Do(apitest.Request{Method: http.MethodDelete, Path: "/" + v + "/attachments/" + att, Bearer: bearer, Header: ua}).
			Expect(http.StatusNoContent)
		w.action, w.targetID = "attachment.deleted", att
		return res, w
	}
	cs["POST /"+v+"/risks/import"] = func(t *testing.T, f fixture) (*apitest.Response, want) {
		bearer, w := who(f)
		body, ct := apitest.Multipart("", apitest.FilePart("file", "risks.csv", "text/csv", "title\nImported "+v+"\n"))
		f.begin(t)
		res := f.env.Upload("/"+v+"/risks/import", bearer, ua, body, ct).Expect(http.StatusCreated)
		// One row, one risk: the newest of the tenant's.
		var page struct{ Data []struct{ ID, Title string } }
		f.env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=1", Bearer: f.a.Key}).Expect(http.StatusOK).Decode(&page)
		if len(page.Data) != 1 || page.Data[0].Title != "Imported "+v {
			t.Fatalf("after the import the newest risk is %+v, want the imported one", page.Data)
		}
		w.action, w.targetID = "risk.created", page.Data[0].ID
		return res, w
	}
}

// assertNoSecrets searches every column of every row of the audit log — at least
// minRows of them — for each secret and password, and for the shapes of secrets
// riskapi issues.
func assertNoSecrets(t *testing.T, env *apitest.Env, secrets []string, minRows int) {
	t.Helper()
	rows, err := env.App.DB.DB.Raw("SELECT * FROM audit_log").Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	n := 0
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprint(vals...)
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				line += " " + cols[i] + "=" + string(b)
			}
		}
		n++
		for _, s := range secrets {
			if s != "" && strings.Contains(line, s) {
				t.Errorf("audit row holds a secret or password (%.8s…): %s", s, line)
			}
		}
		for _, shape := range []string{"whsec_", "rk_", "$2a$", "correct horse"} {
			if strings.Contains(line, shape) {
				t.Errorf("audit row holds something shaped like a secret (%q): %s", shape, line)
			}
		}
	}
	if n < minRows {
		t.Fatalf("searched %d rows; the cases should have written more", n)
	}
}

// mcpInitialize opens an MCP session with f's API key.
func mcpInitialize(t *testing.T, f fixture) *apitest.Response {
	t.Helper()
	return f.env.Do(apitest.Request{Method: http.MethodPost, Path: "/mcp", Bearer: f.a.Key,
		Header: http.Header{"Accept": {"application/json, text/event-stream"}, "User-Agent": ua["User-Agent"]},
		Body:   `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"audit-test","version":"1"}}}`}).
		Expect(http.StatusOK)
}
