package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/riskapi/riskapi/docs"
)

// spec is docs/openapi.yaml as a JSON tree, the one source of the tools' schemas:
// a tool's input and output are read from its route's operation, never written here
// by hand (contract section 22).
type spec struct {
	root map[string]any
}

// loadSpec parses and validates the embedded docs/openapi.yaml.
func loadSpec() (*spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(docs.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: load openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("mcpserver: openapi.yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	return &spec{root: root}, nil
}

// operation returns the operation of method on path (e.g. "get", "/v2/risks").
func (s *spec) operation(method, path string) (map[string]any, error) {
	paths, _ := s.root["paths"].(map[string]any)
	item, _ := paths[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return nil, fmt.Errorf("mcpserver: openapi.yaml has no %s %s", method, path)
	}
	return op, nil
}

// parameters returns the operation's parameters with the path item's, $refs resolved.
func (s *spec) parameters(method, path string) ([]map[string]any, error) {
	op, err := s.operation(method, path)
	if err != nil {
		return nil, err
	}
	item := s.root["paths"].(map[string]any)[path].(map[string]any)
	var out []map[string]any
	for _, list := range []any{item["parameters"], op["parameters"]} {
		ps, _ := list.([]any)
		for _, p := range ps {
			m, err := s.resolve(p)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// requestSchema is the JSON Schema of the operation's body of media type mime.
func (s *spec) requestSchema(method, path, mime string) (map[string]any, error) {
	op, err := s.operation(method, path)
	if err != nil {
		return nil, err
	}
	body, err := s.resolve(op["requestBody"])
	if err != nil {
		return nil, err
	}
	content, _ := body["content"].(map[string]any)
	media, _ := content[mime].(map[string]any)
	if media == nil {
		return nil, fmt.Errorf("mcpserver: %s %s takes no %s body", method, path, mime)
	}
	return s.jsonSchema(media["schema"], 0)
}

// responseSchema is the JSON Schema of the operation's success answer (status), nil
// for an answer without a body (204).
func (s *spec) responseSchema(method, path, status string) (map[string]any, error) {
	op, err := s.operation(method, path)
	if err != nil {
		return nil, err
	}
	responses, _ := op["responses"].(map[string]any)
	resp, err := s.resolve(responses[status])
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %s %s answers no %s: %w", method, path, status, err)
	}
	content, _ := resp["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	if media == nil {
		return nil, nil
	}
	return s.jsonSchema(media["schema"], 0)
}

// resolve follows v's $ref, if any, within the document.
func (s *spec) resolve(v any) (map[string]any, error) {
	m, _ := v.(map[string]any)
	if m == nil {
		return nil, fmt.Errorf("mcpserver: not an object: %v", v)
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return m, nil
	}
	var node any = s.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		obj, _ := node.(map[string]any)
		node = obj[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	return s.resolve(node)
}

// maxSchemaDepth bounds the inlining of $refs: the spec has no recursive schema, and
// a cycle added later must fail loudly at start-up rather than loop.
const maxSchemaDepth = 32

// jsonSchema turns an OpenAPI 3.0 schema into a self-contained JSON Schema (draft
// 2020-12, as MCP asks): $refs inlined, `nullable` as a "null" type, and the
// OpenAPI-only keywords (example, discriminator, xml) dropped.
func (s *spec) jsonSchema(v any, depth int) (map[string]any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("mcpserver: schema nested deeper than %d (a cycle?)", maxSchemaDepth)
	}
	m, err := s.resolve(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, val := range m {
		switch k {
		case "example", "discriminator", "xml", "externalDocs", "nullable":
			continue
		case "properties":
			props := map[string]any{}
			for name, p := range val.(map[string]any) {
				if props[name], err = s.jsonSchema(p, depth+1); err != nil {
					return nil, err
				}
			}
			out[k] = props
		case "items", "not":
			if out[k], err = s.jsonSchema(val, depth+1); err != nil {
				return nil, err
			}
		case "additionalProperties":
			if b, ok := val.(bool); ok {
				out[k] = b
			} else if out[k], err = s.jsonSchema(val, depth+1); err != nil {
				return nil, err
			}
		case "allOf", "anyOf", "oneOf":
			var list []any
			for _, sub := range val.([]any) {
				js, err := s.jsonSchema(sub, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, js)
			}
			out[k] = list
		default:
			out[k] = val
		}
	}
	if nullable, _ := m["nullable"].(bool); nullable {
		switch t := out["type"].(type) {
		case string:
			out["type"] = []any{t, "null"}
		case nil:
		}
		if enum, ok := out["enum"].([]any); ok {
			out["enum"] = append(enum, nil)
		}
	}
	return out, nil
}
