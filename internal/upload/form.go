package upload

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Form is a spooled multipart/form-data body: its parts in the order they arrived.
type Form struct {
	// Parts lists every part, fields and files, in arrival order.
	Parts []Part
}

// Part is one form part: a plain field (File nil) or a file.
type Part struct {
	// Name is the form name (Content-Disposition name parameter).
	Name string
	// Value is a plain field's value; empty for files.
	Value string
	// File is the spooled file, or nil for a plain field.
	File *File
}

// Values returns the values of the plain fields named name, in arrival order.
func (f *Form) Values(name string) []string {
	var out []string
	for _, p := range f.Parts {
		if p.Name == name && p.File == nil {
			out = append(out, p.Value)
		}
	}
	return out
}

// Files returns the files of the parts named name, in arrival order.
func (f *Form) Files(name string) []*File {
	var out []*File
	for _, p := range f.Parts {
		if p.Name == name && p.File != nil {
			out = append(out, p.File)
		}
	}
	return out
}

// Size is the total number of file bytes spooled.
func (f *Form) Size() int64 {
	var n int64
	for _, p := range f.Parts {
		if p.File != nil {
			n += p.File.Size
		}
	}
	return n
}

// canonicalVersion opens every canonical encoding, so a future change of the encoding
// can never collide with fingerprints stored under this one.
const canonicalVersion = "riskapi-multipart/1\n"

// WriteCanonical writes the canonical encoding of f to w: what the multipart
// fingerprint hashes. Two bodies encode alike exactly when they carry the same names,
// and under each name the same sequence of fields (by value) and files (by filename as
// sent, normalised MIME type and SHA-256 of the bytes) — whatever the boundary, the
// part headers' spelling, the transfer encoding, or the order of different names.
//
// Layout, every string as an 8-byte big-endian length and its bytes, every count as
// an 8-byte big-endian integer, so no two forms can share an encoding:
//
//	"riskapi-multipart/1\n"
//	count of names
//	for each name, in bytewise order:
//	  name, count of its parts
//	  for each part, in arrival order:
//	    'v' value                               (plain field)
//	    'f' filename, content type, 32-byte sha (file)
//
// The file bytes themselves were hashed while spooling; this costs O(parts).
func (f *Form) WriteCanonical(w io.Writer) error {
	byName := map[string][]Part{}
	for _, p := range f.Parts {
		byName[p.Name] = append(byName[p.Name], p)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)

	var b []byte
	b = append(b, canonicalVersion...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(names)))
	for _, n := range names {
		b = appendString(b, n)
		parts := byName[n]
		b = binary.BigEndian.AppendUint64(b, uint64(len(parts)))
		for _, p := range parts {
			if p.File == nil {
				b = append(b, 'v')
				b = appendString(b, p.Value)
				continue
			}
			b = append(b, 'f')
			b = appendString(b, p.File.Filename)
			b = appendString(b, p.File.ContentType)
			b = append(b, p.File.SHA256[:]...)
		}
	}
	_, err := w.Write(b)
	return err
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// File is a spooled file part. Its bytes sit in a temporary file that is removed when
// the request ends, unless MoveTo moved it into place first.
type File struct {
	// Field is the form name of the part.
	Field string
	// Filename is the filename parameter exactly as the client sent it. It is client
	// input: never use it as a path (see attachments.SanitizeFilename).
	Filename string
	// ContentType is the part's media type, normalised (lower-case type, parameters
	// sorted); "application/octet-stream" when the part had none.
	ContentType string
	// Size is the number of bytes.
	Size int64
	// SHA256 is the digest of the bytes, computed while they were spooled.
	SHA256 [sha256.Size]byte

	path   string // the temporary file
	synced bool   // fsynced since spooled
	placed bool   // moved into place; no longer ours to remove
}

// SHA256Hex returns SHA256 in lowercase hex.
func (f *File) SHA256Hex() string { return hex.EncodeToString(f.SHA256[:]) }

// Open opens the spooled bytes for reading. Errors: the file was moved or removed.
func (f *File) Open() (*os.File, error) {
	if f.placed {
		return nil, fmt.Errorf("upload: %s was moved into place", f.Field)
	}
	return os.Open(f.path)
}

// Sync makes the spooled bytes durable (fsync). MoveTo does it when it was not done:
// calling Sync first keeps that wait, long for a large file, out of a transaction the
// caller is about to open.
func (f *File) Sync() error {
	if f.synced {
		return nil
	}
	if f.placed {
		return fmt.Errorf("upload: %s was moved into place", f.Field)
	}
	if err := syncFile(f.path); err != nil {
		return fmt.Errorf("sync spooled file: %w", err)
	}
	f.synced = true
	return nil
}

// MoveTo makes the spooled bytes durable (Sync) and renames them to dst, creating
// dst's folder (0700) if needed; dst must be on the file system of the spool folder.
// From then on the file is the caller's: the end of the request no longer removes it.
// Its modification time is set to now, so an orphan sweep that spares recent files
// measures its grace period from the move. Call it as the last step of a handler:
// if the request's transaction then rolls back, the moved file is an orphan that only
// a sweep removes.
func (f *File) MoveTo(dst string) error {
	if f.placed {
		return fmt.Errorf("upload: %s was moved already", f.Field)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Rename(f.path, dst); err != nil {
		return fmt.Errorf("move spooled file into place: %w", err)
	}
	f.placed = true
	now := time.Now()
	_ = os.Chtimes(dst, now, now)
	// The rename is durable only once its folder is synced.
	if err := syncFile(dir); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func syncFile(path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	err = fh.Sync()
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	// Some file systems cannot sync a folder; the data itself is what matters most.
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}
