package sandboxhttp_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// mode is one side of a tenant: its live data or its sandbox, with the credentials
// that reach it.
type mode struct {
	name    string
	key     string      // an API key of the mode (/v2)
	session string      // the tenant's admin session (/v1)
	header  http.Header // what the session sends to be in this mode
	user    string      // the tenant's admin, an owner the mode's actions may name
}

// objects are one mode's resources, one of each kind a route takes the ID of.
type objects struct {
	risk, attachment, event, endpoint, source, idemKey, request string
	action, acceptance, user                                    string
}

// idRoute is a route that takes an ID, and the request it makes for another
// mode's objects o, by credential bearer (and header h).
type idRoute func(o objects) apitest.Request

// sharedByModes are the routes whose IDs are the tenant's account, which live and
// test mode share (docs/sandboxes.md), and the unauthenticated inbound webhook,
// whose source is found by name and acts in the mode it was made in.
var sharedByModes = []string{"/v1/users/:id", "/v1/api-keys/:id", "/v1/api-keys/:id/roll", "/webhooks/inbound/:source", "/risks/:id"}

// idRoutes are the requests for every route with an ID of tenant data, by path
// relative to the version; TestLiveAndTestDataAreApart fails on a route of the
// router that is neither here nor in sharedByModes.
var idRoutes = map[string]idRoute{
	"GET /risks/:id":                func(o objects) apitest.Request { return get("/risks/" + o.risk) },
	"PATCH /risks/:id":              func(o objects) apitest.Request { return write(http.MethodPatch, "/risks/"+o.risk) },
	"PUT /risks/:id":                func(o objects) apitest.Request { return write(http.MethodPut, "/risks/"+o.risk) },
	"DELETE /risks/:id":             func(o objects) apitest.Request { return del("/risks/" + o.risk) },
	"GET /risks/:id/attachments":    func(o objects) apitest.Request { return get("/risks/" + o.risk + "/attachments") },
	"POST /risks/:id/attachments":   nil, // an upload: uploadTo
	"GET /risks/:id/history":        func(o objects) apitest.Request { return get("/risks/" + o.risk + "/history") },
	"GET /risks/:id/score-history":  func(o objects) apitest.Request { return get("/risks/" + o.risk + "/score-history") },
	"DELETE /attachments/:id":       func(o objects) apitest.Request { return del("/attachments/" + o.attachment) },
	"GET /attachments/:id/content":  func(o objects) apitest.Request { return get("/attachments/" + o.attachment + "/content") },
	"GET /events/:id":               func(o objects) apitest.Request { return get("/events/" + o.event) },
	"POST /events/:id/redeliver":    func(o objects) apitest.Request { return write(http.MethodPost, "/events/"+o.event+"/redeliver") },
	"DELETE /webhook-endpoints/:id": func(o objects) apitest.Request { return del("/webhook-endpoints/" + o.endpoint) },
	"GET /webhook-endpoints/:id/deliveries": func(o objects) apitest.Request {
		return get("/webhook-endpoints/" + o.endpoint + "/deliveries")
	},
	"GET /webhook-endpoints/:id": func(o objects) apitest.Request { return get("/webhook-endpoints/" + o.endpoint) },
	"PATCH /webhook-endpoints/:id": func(o objects) apitest.Request {
		return apitest.Request{Method: http.MethodPatch, Path: "/webhook-endpoints/" + o.endpoint,
			JSON: map[string]any{"description": "taken over"}}
	},
	"POST /webhook-endpoints/:id/disable": func(o objects) apitest.Request { return post("/webhook-endpoints/"+o.endpoint+"/disable", nil) },
	"POST /webhook-endpoints/:id/enable":  func(o objects) apitest.Request { return post("/webhook-endpoints/"+o.endpoint+"/enable", nil) },
	"POST /webhook-endpoints/:id/ping":    func(o objects) apitest.Request { return post("/webhook-endpoints/"+o.endpoint+"/ping", nil) },
	"POST /webhook-endpoints/:id/roll-secret": func(o objects) apitest.Request {
		return post("/webhook-endpoints/"+o.endpoint+"/roll-secret", map[string]any{"expiresIn": 0})
	},
	"GET /risks/:id/reviews": func(o objects) apitest.Request { return get("/risks/" + o.risk + "/reviews") },
	"POST /risks/:id/reviews": func(o objects) apitest.Request {
		return post("/risks/"+o.risk+"/reviews", map[string]any{"outcome": "unchanged"})
	},
	"GET /risks/:id/actions": func(o objects) apitest.Request { return get("/risks/" + o.risk + "/actions") },
	"POST /risks/:id/actions": func(o objects) apitest.Request {
		return post("/risks/"+o.risk+"/actions", map[string]any{"title": "taken over", "ownerId": o.user, "dueDate": "2030-01-01"})
	},
	"GET /actions/:id": func(o objects) apitest.Request { return get("/actions/" + o.action) },
	"PATCH /actions/:id": func(o objects) apitest.Request {
		return apitest.Request{Method: http.MethodPatch, Path: "/actions/" + o.action, JSON: map[string]any{"status": "done"}}
	},
	"GET /risks/:id/acceptances": func(o objects) apitest.Request { return get("/risks/" + o.risk + "/acceptances") },
	"POST /risks/:id/acceptances": func(o objects) apitest.Request {
		return post("/risks/"+o.risk+"/acceptances", map[string]any{"justification": "taken over",
			"validUntil": time.Now().AddDate(0, 6, 0).Format(time.DateOnly)})
	},
	"GET /acceptances/:id": func(o objects) apitest.Request { return get("/acceptances/" + o.acceptance) },
	"POST /acceptances/:id/approve": func(o objects) apitest.Request {
		return post("/acceptances/"+o.acceptance+"/approve", map[string]any{"note": "x"})
	},
	"POST /acceptances/:id/reject": func(o objects) apitest.Request {
		return post("/acceptances/"+o.acceptance+"/reject", map[string]any{"note": "x"})
	},
	"DELETE /webhook-sources/:id": func(o objects) apitest.Request { return del("/webhook-sources/" + o.source) },
	"GET /idempotency-keys/:key": func(o objects) apitest.Request {
		return get("/idempotency-keys/" + o.idemKey + "?method=POST&path=%2Fv2%2Frisks")
	},
	"GET /requests/:id": func(o objects) apitest.Request { return get("/requests/" + o.request) },
}

func get(path string) apitest.Request { return apitest.Request{Method: http.MethodGet, Path: path} }
func del(path string) apitest.Request { return apitest.Request{Method: http.MethodDelete, Path: path} }
func post(path string, body map[string]any) apitest.Request {
	return apitest.Request{Method: http.MethodPost, Path: path, JSON: body}
}
func write(method, path string) apitest.Request {
	return apitest.Request{Method: method, Path: path, JSON: map[string]any{"title": "taken over", "status": "closed"}}
}

// TestLiveAndTestDataAreApart: live and test data are apart as two tenants' are
// (docs/sandboxes.md). Every route of the router that takes the ID of tenant data
// answers 404 to the other mode — a test key or a session in test mode for a live
// object, a live key or a session in live mode for a sandbox object — on /v1 and
// /v2, and nothing of the other mode is listed; afterwards each mode's objects are
// as they were.
func TestLiveAndTestDataAreApart(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Outbound.AllowPrivate = true })
	a := env.Tenant("Acme")
	session := apitest.Login(t, env, a).Token
	var me struct{ User struct{ ID string } }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/me", Bearer: session}).Expect(http.StatusOK).Decode(&me)
	user := me.User.ID
	live := mode{name: "live", key: a.Key, session: session, header: http.Header{}, user: user}
	test := mode{name: "test", key: env.TestKey(a), session: session, header: http.Header{"Riskapi-Mode": {"test"}}, user: user}

	// Every route with an ID has its case, or is named shared.
	for _, r := range env.App.Echo.Routes() {
		if !strings.Contains(r.Path, ":") || r.Method == http.MethodHead || r.Method == http.MethodOptions ||
			slices.Contains(sharedByModes, r.Path) {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(r.Path, "/v1"), "/v2")
		if _, ok := idRoutes[r.Method+" "+rel]; !ok {
			t.Errorf("route %s %s takes an ID but has no case here: add one to idRoutes", r.Method, r.Path)
		}
	}

	objs := map[string]objects{"live": make(t, env, live), "test": make(t, env, test)}
	for _, pair := range [][2]mode{{live, test}, {test, live}} {
		owner, other := pair[0], pair[1]
		o := objs[owner.name]
		for name, build := range idRoutes {
			method, rel, _ := strings.Cut(name, " ")
			for _, version := range []string{"/v1", "/v2"} {
				if !served(env, method, version+rel) {
					continue
				}
				t.Run(owner.name+" object, "+other.name+" mode: "+method+" "+version+rel, func(t *testing.T) {
					if build == nil { // the upload
						body, ct := apitest.Multipart("", apitest.FilePart("file", "x.txt", "text/plain", "taken over"))
						bearer, h := other.credentials(version)
						env.Upload(version+"/risks/"+o.risk+"/attachments", bearer, h, body, ct).
							ExpectProblem(http.StatusNotFound, "NOT_FOUND")
						return
					}
					req := build(o)
					req.Path = version + req.Path
					req.Bearer, req.Header = other.credentials(version)
					apitest.Do(t, env, req).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
				})
			}
		}
		// The other mode's lists hold nothing of the owner's.
		for _, list := range []string{"/v2/risks", "/v2/events", "/v2/audit-log"} {
			res := env.Do(apitest.Request{Method: http.MethodGet, Path: list, Bearer: other.key}).Expect(http.StatusOK)
			for _, id := range []string{o.risk, o.event, o.request} {
				if strings.Contains(res.Body.String(), id) {
					t.Errorf("%s of the %s mode lists %s of the %s mode", list, other.name, id, owner.name)
				}
			}
		}
		// The other mode's request log holds its own probes above, whose paths name
		// the owner's IDs; none of its entries is the owner's request.
		var reqs struct{ Data []struct{ ID string } }
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/requests?limit=100", Bearer: other.key}).
			Expect(http.StatusOK).Decode(&reqs)
		for _, e := range reqs.Data {
			if e.ID == o.request {
				t.Errorf("/v2/requests of the %s mode lists %s of the %s mode", other.name, o.request, owner.name)
			}
		}
		eps := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints", Bearer: other.session,
			Header: other.header}).Expect(http.StatusOK)
		if strings.Contains(eps.Body.String(), o.endpoint) {
			t.Errorf("the %s mode's endpoints list %s of the %s mode", other.name, o.endpoint, owner.name)
		}
	}
	// Each mode's objects are as they were, and say their mode.
	for _, m := range []mode{live, test} {
		o := objs[m.name]
		r := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + o.risk, Bearer: m.key}).
			Expect(http.StatusOK).Map()
		if r["title"] != m.name+" risk" || r["livemode"] != (m.name == "live") {
			t.Errorf("%s risk after the other mode's attempts: %v", m.name, r)
		}
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/attachments/" + o.attachment + "/content", Bearer: m.key}).
			Expect(http.StatusOK)
		env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/webhook-endpoints/" + o.endpoint + "/deliveries",
			Bearer: m.session, Header: m.header}).Expect(http.StatusOK)
	}
}

// credentials are what a request of m on version sends.
func (m mode) credentials(version string) (string, http.Header) {
	if version == "/v2" {
		return m.key, nil
	}
	return m.session, m.header.Clone()
}

// served reports whether the router serves method on path (an Echo path).
func served(env *apitest.Env, method, path string) bool {
	for _, r := range env.App.Echo.Routes() {
		if r.Method == method && r.Path == path {
			return true
		}
	}
	return false
}

// make creates one object of each kind in mode m, and checks m reaches them.
func make(t *testing.T, env *apitest.Env, m mode) objects {
	t.Helper()
	var o objects
	o.idemKey = "sandbox-isolation-" + m.name
	created := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: m.key,
		Header: http.Header{"Idempotency-Key": {o.idemKey}}, JSON: map[string]any{"title": m.name + " risk"}}).
		Expect(http.StatusCreated)
	o.risk, o.request = created.Map()["id"].(string), created.Header().Get("X-Request-Id")
	body, ct := apitest.Multipart("", apitest.FilePart("file", "a.txt", "text/plain", m.name+" bytes"))
	o.attachment = env.Upload("/v2/risks/"+o.risk+"/attachments", m.key, nil, body, ct).
		Expect(http.StatusCreated).Map()["id"].(string)
	var evs struct{ Data []struct{ ID string } }
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?type=risk.created", Bearer: m.key}).
		Expect(http.StatusOK).Decode(&evs)
	if len(evs.Data) != 1 {
		t.Fatalf("%s mode: %d risk.created events, want its one", m.name, len(evs.Data))
	}
	o.event = evs.Data[0].ID
	o.user = m.user
	o.action = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + o.risk + "/actions", Bearer: m.key,
		JSON: map[string]any{"title": m.name + " action", "ownerId": m.user, "dueDate": "2030-01-01"}}).
		Expect(http.StatusCreated).Map()["id"].(string)
	o.acceptance = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + o.risk + "/acceptances", Bearer: m.key,
		JSON: map[string]any{"justification": m.name + " acceptance", "validUntil": time.Now().AddDate(0, 6, 0).Format(time.DateOnly)}}).
		Expect(http.StatusCreated).Map()["id"].(string)
	o.endpoint = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-endpoints", Bearer: m.session,
		Header: m.header, JSON: map[string]any{"url": "http://127.0.0.1:9/" + m.name}}).
		Expect(http.StatusCreated).Map()["id"].(string)
	o.source = env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/webhook-sources", Bearer: m.session,
		Header: m.header, JSON: map[string]any{"source": "scanner-" + m.name}}).
		Expect(http.StatusCreated).Map()["id"].(string)
	// The request log is written off the request's path: wait for the entry.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/requests/" + o.request, Bearer: m.key})
		if res.Code == http.StatusOK {
			if res.Map()["livemode"] != (m.name == "live") {
				t.Errorf("%s mode's request-log entry: livemode %v", m.name, res.Map()["livemode"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s mode's request %s never reached the request log", m.name, o.request)
		}
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/idempotency-keys/" + o.idemKey + "?method=POST&path=%2Fv2%2Frisks",
		Bearer: m.key}).Expect(http.StatusOK)
	return o
}
