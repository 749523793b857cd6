package listgen

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/riskapi/riskapi/internal/changes"
)

// auditTable is docs/audit-log.md's table of actions: one row per action of
// changes.Registry, in its order.
func auditTable() (string, error) {
	var b strings.Builder
	b.WriteString("| action | when | changes |\n| --- | --- | --- |\n")
	for _, d := range changes.Registry {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", d.Action, d.When, d.Changes)
	}
	return b.String(), nil
}

// eventTable is docs/events.md's table of event types: one row per member of the
// spec's Event union, in its order, with what its description says of data.object
// and when its action is recorded (changes.Registry).
func eventTable(doc *openapi3.T) (string, error) {
	union, ok := doc.Components.Schemas["Event"]
	if !ok || union.Value == nil || union.Value.Discriminator == nil {
		return "", fmt.Errorf("listgen: docs/openapi.yaml has no Event union")
	}
	typeOf := map[string]string{}
	for typ, ref := range union.Value.Discriminator.Mapping {
		typeOf[ref.Ref] = typ
	}
	var b strings.Builder
	b.WriteString("| type | when | what it carries |\n| --- | --- | --- |\n")
	for _, member := range union.Value.OneOf {
		typ := typeOf[member.Ref]
		d, ok := changes.Find(typ)
		if !ok || !d.Event {
			return "", fmt.Errorf("listgen: the spec's event type %q is no event of changes.Registry", typ)
		}
		carries, found := strings.CutPrefix(member.Value.Description, "`"+typ+"`: ")
		if !found {
			return "", fmt.Errorf("listgen: the description of %s does not begin with \"`%s`: \"", member.Ref, typ)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", typ, d.When, strings.TrimSpace(carries))
	}
	return b.String(), nil
}
