package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/via"
)

// forwarded are the headers of the /mcp request a tool call's /v2 request carries:
// the credential, and what the audit log and tracing read of the client. Nothing
// else of the envelope reaches the route.
var forwarded = []string{"Authorization", "User-Agent", "X-Forwarded-For", "X-Real-Ip", "Forwarded",
	"Traceparent", "Tracestate", apiversion.Header}

// boundTool is a toolRoute with the parameter names its operation declares.
type boundTool struct {
	toolRoute
	pathParams []string
	query      map[string]bool
	known      map[string]bool // every argument name the input schema has
}

// callError is a tool call refused before its route ran: an argument of the wrong
// shape. It answers as a problem of code VALIDATION_FAILED (or code).
type callError struct {
	code, detail string
}

func (e *callError) Error() string { return e.detail }

// request builds the /v2 request the call is: same method, path, query, headers and
// body as an HTTP client would send, so the idempotency engine fingerprints both
// alike (contract section 22). ctx is marked with how the call came (via.Call).
func (t boundTool) request(ctx context.Context, args map[string]json.RawMessage, extra *mcp.RequestExtra, call via.Call) (*http.Request, error) {
	for name := range args {
		if !t.known[name] {
			return nil, &callError{"VALIDATION_FAILED", fmt.Sprintf("%s takes no argument %q", t.name, name)}
		}
	}
	target, err := t.target(args)
	if err != nil {
		return nil, err
	}
	body, contentType, err := t.body(args)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(via.With(ctx, call), t.method, target, bytes.NewReader(body))
	if err != nil {
		return nil, &callError{"VALIDATION_FAILED", "the arguments make no valid request: " + err.Error()}
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if extra != nil {
		for _, h := range forwarded {
			for _, v := range extra.Header.Values(h) {
				req.Header.Add(h, v)
			}
		}
		if info := extra.TokenInfo; info != nil {
			req.RemoteAddr, _ = info.Extra[extraRemoteAddr].(string)
		}
	}
	if req.Header.Get(apiversion.Header) == "" {
		// The tools' schemas are docs/openapi.yaml's, which describe the newest
		// version (docs/mcp.md, API version): a call speaks it unless the agent's
		// /mcp request names another.
		req.Header.Set(apiversion.Header, string(apiversion.API.Newest()))
	}
	return req, t.conditions(req, args)
}

// target is the request's path and query from the path and query arguments.
func (t boundTool) target(args map[string]json.RawMessage) (string, error) {
	path := t.path
	for _, p := range t.pathParams {
		v, err := stringArg(args, p)
		if err != nil {
			return "", err
		}
		if v == "" {
			return "", &callError{"VALIDATION_FAILED", fmt.Sprintf("argument %q is required", p)}
		}
		path = strings.ReplaceAll(path, "{"+p+"}", url.PathEscape(v))
	}
	q := url.Values{}
	for name := range t.query {
		if raw, ok := args[name]; ok {
			if err := addQuery(q, name, raw); err != nil {
				return "", err
			}
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path, nil
}

// body is the request's body and its Content-Type: the risk argument's JSON as the
// agent sent it (the engine canonicalises it, as for HTTP), or the CSV as a form.
func (t boundTool) body(args map[string]json.RawMessage) ([]byte, string, error) {
	switch t.toolRoute.body {
	case jsonBody:
		raw, ok := args[argRisk]
		if !ok {
			return nil, "", &callError{"VALIDATION_FAILED", fmt.Sprintf("argument %q is required", argRisk)}
		}
		return raw, "application/json", nil
	case csvBody:
		text, err := stringArg(args, argCSV)
		if err != nil {
			return nil, "", err
		}
		return csvForm(text)
	}
	return nil, "", nil
}

// conditions sets Idempotency-Key (required of every write tool) and If-Match.
func (t boundTool) conditions(req *http.Request, args map[string]json.RawMessage) error {
	if t.write() {
		key, err := stringArg(args, argKey)
		if err != nil {
			return err
		}
		if key == "" {
			// The engine's own answer for a missing key is optional on HTTP; here the
			// key is what makes a retried tool call safe, so it is required.
			return &callError{"IDEMPOTENCY_KEY_REQUIRED", "write tools require idempotencyKey: a fresh UUID per intended write, reused only to retry it"}
		}
		req.Header.Set("Idempotency-Key", key)
	}
	if _, ok := args[argIfMatch]; ok {
		v, err := stringArg(args, argIfMatch)
		if err != nil {
			return err
		}
		req.Header.Set("If-Match", v)
	}
	return nil
}

// stringArg reads the string argument name ("" when absent).
func stringArg(args map[string]json.RawMessage, name string) (string, error) {
	raw, ok := args[name]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &callError{"VALIDATION_FAILED", fmt.Sprintf("argument %q must be a string", name)}
	}
	return s, nil
}

// addQuery adds a query argument as the HTTP route reads it: a scalar as its text, an
// array as the parameter repeated, an object (metadata) as name[key]=value.
func addQuery(q url.Values, name string, raw json.RawMessage) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return &callError{"VALIDATION_FAILED", fmt.Sprintf("argument %q is not JSON", name)}
	}
	scalar := func(v any) (string, bool) {
		switch x := v.(type) {
		case string:
			return x, true
		case json.Number:
			return x.String(), true
		case bool:
			return strconv.FormatBool(x), true
		}
		return "", false
	}
	switch x := v.(type) {
	case nil:
	case []any:
		for _, item := range x {
			s, ok := scalar(item)
			if !ok {
				return &callError{"VALIDATION_FAILED", fmt.Sprintf("argument %q must list strings or numbers", name)}
			}
			q.Add(name, s)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s, ok := scalar(x[k])
			if !ok {
				return &callError{"VALIDATION_FAILED", fmt.Sprintf("argument %q must map keys to strings", name)}
			}
			q.Add(name+"["+k+"]", s)
		}
	default:
		s, _ := scalar(x)
		q.Set(name, s)
	}
	return nil
}

// csvFilename and csvType name the file part an import_risks call sends: an HTTP
// import of the same bytes under this name and type is the same request to the
// idempotency engine (docs/mcp.md).
const (
	csvFilename = "risks.csv"
	csvType     = "text/csv"
)

// csvForm is text as the multipart body of POST /v2/risks/import.
func csvForm(text string) ([]byte, string, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, csvFilename))
	h.Set("Content-Type", csvType)
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write([]byte(text)); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), w.FormDataContentType(), nil
}

// result turns the route's answer into the tool's: a 2xx is the structured result
// (its body under result, replayed, the ETag); anything else a tool error carrying
// the problem, its code in the tool vocabulary (toolCode) and retryAfter.
func (t boundTool) result(rec *httptest.ResponseRecorder) *mcp.CallToolResult {
	if rec.Code >= 200 && rec.Code < 300 {
		out := map[string]any{"status": rec.Code, "requestId": rec.Header().Get("X-Request-Id")}
		if rec.Body.Len() > 0 {
			out["result"] = json.RawMessage(slices.Clone(rec.Body.Bytes()))
		}
		if t.write() {
			out["replayed"] = rec.Header().Get("Idempotent-Replayed") == "true"
		}
		if etag := rec.Header().Get("ETag"); etag != "" {
			out["etag"] = etag
		}
		return structured(out, false)
	}
	var p map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p == nil {
		p = map[string]any{"status": rec.Code, "code": "INTERNAL", "detail": http.StatusText(rec.Code)}
	}
	if code, ok := p["code"].(string); ok {
		p["code"] = toolCode(code)
	}
	if ra := rec.Header().Get("Retry-After"); ra != "" {
		if n, err := strconv.Atoi(ra); err == nil {
			p["retryAfter"] = n
		}
	}
	if id := rec.Header().Get("X-Request-Id"); id != "" {
		p["requestId"] = id
	}
	return structured(p, true)
}

// toolCode is a route's problem code as a tool error names it. One differs: a key
// another call is still running is IDEMPOTENCY_KEY_IN_USE (contract section 22), the
// 409 IDEMPOTENCY_REQUEST_IN_PROGRESS of HTTP, which only the engine decides.
func toolCode(code string) string {
	if code == string(problem.IdempotencyRequestInProgress) {
		return codeKeyInUse
	}
	return code
}

// codeKeyInUse is the tool error of a key held by a call still running.
const codeKeyInUse = "IDEMPOTENCY_KEY_IN_USE"

// structured is v as a tool result: structuredContent, and the same JSON as text for
// clients that read only content.
func structured(v map[string]any, isError bool) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"code":"INTERNAL"}`)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b), IsError: isError}
}

// refused is a call refused before its route ran, as a tool error.
func refused(err *callError) *mcp.CallToolResult {
	status := http.StatusBadRequest
	return structured(map[string]any{"type": "about:blank", "status": status, "code": err.code, "detail": err.detail}, true)
}
