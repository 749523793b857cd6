// Package web serves riskapi's dashboard: the single-page app built by Vite
// into dist/ and embedded in the binary (docs/dashboard.md). dist/ is committed,
// so building the Go binary needs no Node; `npm run build` in web/ remakes it.
package web

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Files is the built dashboard: index.html at its root, hashed assets under assets/.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal that go:embed guarantees
	}
	return sub
}
