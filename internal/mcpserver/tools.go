package mcpserver

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bodyKind is how a tool's arguments carry its route's request body.
type bodyKind int

const (
	noBody   bodyKind = iota
	jsonBody          // the argument "risk": the route's JSON body, as is
	csvBody           // the argument "csv": the file part of the route's multipart body
)

// toolRoute is one tool: the /v2 route it is "in another envelope" (contract section
// 22). Its schemas come from that route's operation in docs/openapi.yaml.
type toolRoute struct {
	name, title, description string
	method                   string
	path                     string // the spec's path, e.g. /v2/risks/{id}
	status                   string // the success answer whose body is the result
	body                     bodyKind
	readOnly, destructive    bool
	// idempotent: the same call twice has no further effect. Every write tool is,
	// because it takes an idempotencyKey; its hint says so only because of that key.
	idempotent bool
}

// write reports whether the tool changes something: it then requires idempotencyKey.
func (t toolRoute) write() bool { return t.method != http.MethodGet }

// routes lists the tools that are /v2 routes. get_write_outcome is not one (outcome.go).
var routes = []toolRoute{
	{name: "list_risks", title: "List risks", method: http.MethodGet, path: "/v2/risks", status: "200",
		readOnly: true, idempotent: true,
		description: "Lists the tenant's risks, newest first unless sort says otherwise, with the filters of GET /v2/risks (status, treatment, category, owner, scores, dates, q, metadata). Pages by cursor: pass the answer's nextCursor as cursor."},
	{name: "get_risk", title: "Get a risk", method: http.MethodGet, path: "/v2/risks/{id}", status: "200",
		readOnly: true, idempotent: true,
		description: "Reads one risk by id. Its version is the ETag to pass as ifMatch to update_risk or delete_risk."},
	{name: "create_risk", title: "Create a risk", method: http.MethodPost, path: "/v2/risks", status: "201",
		body: jsonBody, idempotent: true,
		description: "Creates a risk from `risk` (title required). Requires idempotencyKey: retrying with the same key and arguments never creates a second risk; the retry answers the first result with replayed: true."},
	{name: "update_risk", title: "Update a risk", method: http.MethodPatch, path: "/v2/risks/{id}", status: "200",
		body: jsonBody, destructive: true, idempotent: true,
		description: "Changes the fields given in `risk` (a merge patch; null clears). ifMatch (the risk's ETag, e.g. \"\\\"3\\\"\") makes the change apply only over that version, else the tool error PRECONDITION_FAILED carries the current risk. Requires idempotencyKey."},
	{name: "delete_risk", title: "Delete a risk", method: http.MethodDelete, path: "/v2/risks/{id}", status: "204",
		destructive: true, idempotent: true,
		description: "Deletes a risk (ifMatch as for update_risk). Requires idempotencyKey: a retry with the same key answers the first deletion, replayed, rather than NOT_FOUND."},
	{name: "import_risks", title: "Import risks from CSV", method: http.MethodPost, path: "/v2/risks/import", status: "201",
		body: csvBody, destructive: true, idempotent: true,
		description: "Imports risks from CSV text with an export's columns: a row with id or externalId updates that risk, one without creates one; all rows or none. dryRun reports without writing. Requires idempotencyKey; the CSV is sent as the file part `file` named risks.csv of type text/csv, so an HTTP import of the same bytes under that name and type is the same request."},
	{name: "get_heatmap", title: "Risk heat map", method: http.MethodGet, path: "/v2/risks/heatmap", status: "200",
		readOnly: true, idempotent: true,
		description: "Counts the tenant's risks by likelihood and impact (inherent or residual), with the list's filters. movedSince (YYYY-MM-DD, UTC, within the audit log's retention) adds moves: how many of the selected risks moved from each cell to each other since that day began. Too many changes since that day is the tool error VALIDATION_FAILED asking for a later one."},
	{name: "list_events", title: "List events", method: http.MethodGet, path: "/v2/events", status: "200",
		readOnly: true, idempotent: true,
		description: "Lists the tenant's events (risk.created, risk.updated, …), newest first."},
	{name: "search_audit_log", title: "Search the audit log", method: http.MethodGet, path: "/v2/audit-log", status: "200",
		readOnly: true, idempotent: true,
		description: "Searches the tenant's audit log by action, actor, target and time. Needs a key with audit:read."},
}

// Argument names that are not the route's query parameters.
const (
	argKey     = "idempotencyKey"
	argIfMatch = "ifMatch"
	argRisk    = "risk"
	argCSV     = "csv"
)

// inputSchema is the tool's arguments as JSON Schema: the route's path and query
// parameters by their names, Idempotency-Key and If-Match under camel-case names,
// and the body under risk or csv; all from the route's operation.
func (s *spec) inputSchema(t toolRoute) (map[string]any, error) {
	params, err := s.parameters(t.method, t.path)
	if err != nil {
		return nil, err
	}
	props := map[string]any{}
	required := []any{}
	for _, p := range params {
		name, _ := p["name"].(string)
		schema, err := s.jsonSchema(p["schema"], 0)
		if err != nil {
			return nil, err
		}
		if d, ok := p["description"].(string); ok {
			schema["description"] = strings.TrimSpace(d)
		}
		switch p["in"] {
		case "path":
			props[name] = schema
			required = append(required, name)
		case "query":
			props[name] = schema
		case "header":
			switch http.CanonicalHeaderKey(name) {
			case "Idempotency-Key":
				props[argKey] = schema
				required = append(required, argKey)
			case "If-Match":
				props[argIfMatch] = schema
			}
		}
	}
	switch t.body {
	case jsonBody:
		body, err := s.requestSchema(t.method, t.path, "application/json")
		if err != nil {
			body, err = s.requestSchema(t.method, t.path, "application/merge-patch+json")
		}
		if err != nil {
			return nil, err
		}
		props[argRisk] = body
		required = append(required, argRisk)
	case csvBody:
		props[argCSV] = map[string]any{"type": "string", "minLength": 1,
			"description": "The CSV file's text: a header row naming an export's columns, then one row per risk."}
		required = append(required, argCSV)
	}
	if t.write() {
		if _, ok := props[argKey]; !ok {
			return nil, fmt.Errorf("mcpserver: %s %s declares no Idempotency-Key", t.method, t.path)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}, nil
}

// outputSchema is the tool's structured result: the route's answer under result,
// and for writes whether it was replayed and the version it wrote.
func (s *spec) outputSchema(t toolRoute) (map[string]any, error) {
	result, err := s.responseSchema(t.method, t.path, t.status)
	if err != nil {
		return nil, err
	}
	props := map[string]any{
		"status":    map[string]any{"type": "integer", "description": "The HTTP status the route answered."},
		"requestId": map[string]any{"type": "string", "description": "The X-Request-Id of the /v2 request the call ran as (GET /v2/requests/{id})."},
	}
	required := []any{"status", "requestId"}
	if result != nil {
		props["result"] = result
		required = append(required, "result")
	}
	if t.write() {
		props["replayed"] = map[string]any{"type": "boolean",
			"description": "true when this answer is the stored result of an earlier call with the same idempotencyKey (nothing ran again)."}
		required = append(required, "replayed")
	}
	if t.path == "/v2/risks/{id}" || t.path == "/v2/risks" && t.method == http.MethodPost {
		props["etag"] = map[string]any{"type": "string", "description": "The risk's ETag: pass it as ifMatch."}
	}
	return map[string]any{"type": "object", "properties": props, "required": required}, nil
}

// tool is t as the MCP tool the server lists.
func (s *spec) tool(t toolRoute) (*mcp.Tool, error) {
	in, err := s.inputSchema(t)
	if err != nil {
		return nil, err
	}
	out, err := s.outputSchema(t)
	if err != nil {
		return nil, err
	}
	destructive, openWorld := t.destructive, false
	return &mcp.Tool{Name: t.name, Title: t.title, Description: t.description, InputSchema: in, OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: t.readOnly, DestructiveHint: &destructive,
			IdempotentHint: t.idempotent, OpenWorldHint: &openWorld}}, nil
}
