package apiversion

// V20270115 makes a risk's owner an object: one of the tenant's users, or a name.
const V20270115 Version = "2027-01-15"

// ownerObject is the change of 2027-01-15 (docs/api-versions.md): a risk's owner,
// a string before, is {"userId": "usr_…" | null, "name": "…"}. Before it, a string
// written is a name owner, and an owner reads as its name (a user owner's name is
// the user's email).
var ownerObject = Change{
	Version:     V20270115,
	Description: "A risk's `owner` is an object `{\"userId\", \"name\"}`: one of the tenant's users, or a name. Before, `owner` is a string: a user owner's email, or the name; a string written is a name owner.",
	Resources:   []string{"risk"},
	Members:     riskOwner,
	Request: func(obj Object) error {
		switch owner := obj["owner"].(type) {
		case string:
			obj["owner"] = map[string]any{"name": owner}
		case nil:
			// absent or null: the newest version refuses a null owner as the old did
		default:
			return &ShapeError{Field: "owner", Detail: "must be a string (the owner's name)"}
		}
		return nil
	},
}

// snapshotOwner is the same change seen in an acceptance: its riskSnapshot is the
// risk as the decider saw it, rendered like every risk (docs/register.md).
var snapshotOwner = Change{
	Version:     V20270115,
	Description: "An acceptance's `riskSnapshot` shows the risk's `owner` as risks do: an object from this version, a string before.",
	Resources:   []string{"acceptance"},
	Members: map[string]MemberRender{"riskSnapshot": func(dst, snapshot []byte) ([]byte, error) {
		return renderMembers(dst, snapshot, riskOwner)
	}},
}

// riskOwner renders a risk's owner before the change.
var riskOwner = map[string]MemberRender{"owner": ownerName}

// ownerName renders an owner object as its name, the bytes the newest version
// wrote for it (a user owner's name is the user's email); an owner that is no
// object is left as it is.
func ownerName(dst, owner []byte) ([]byte, error) {
	if owner[0] != '{' {
		return append(dst, owner...), nil
	}
	name, err := memberValue(owner, "name")
	if name == nil {
		name = []byte("null")
	}
	return append(dst, name...), err
}
