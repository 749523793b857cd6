package attachments

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/riskapi/riskapi/internal/ids"
)

// Files is where attachment bytes live: <Dir>/<tenant id>/<attachment id>, one file
// each, and <Dir>/tmp for uploads being spooled. Paths are built from IDs only —
// never from anything a client named.
type Files struct {
	// Dir is the root folder (UPLOAD_DIR).
	Dir string
}

// tmpName is the spool folder's name under Dir; tenant folders never take it, their
// names having the shape of tenant IDs.
const tmpName = "tmp"

// TempDir is the folder uploads are spooled to: under Dir, so that moving a spooled
// file into place is a rename on one file system.
func (f Files) TempDir() string { return filepath.Join(f.Dir, tmpName) }

// Path returns where the bytes of the tenant's attachment id live. Errors: either ID
// does not have the shape ids.New gives, which would make it unsafe as a path.
func (f Files) Path(tenantID, id string) (string, error) {
	if !scopeID(tenantID) || !ids.Valid(ids.Attachment, id) {
		return "", fmt.Errorf("attachments: no path for tenant %q, attachment %q", tenantID, id)
	}
	return filepath.Join(f.Dir, tenantID, id), nil
}

// Open opens the bytes of the tenant's attachment id.
func (f Files) Open(tenantID, id string) (*os.File, error) {
	p, err := f.Path(tenantID, id)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// scopeID reports whether name is a tenant's ID or its sandbox's: the folders the
// bytes live in (a sandbox's attachments are apart from live ones, docs/sandboxes.md).
func scopeID(name string) bool { return ids.Valid(ids.Tenant, name) || ids.Valid(ids.Sandbox, name) }
