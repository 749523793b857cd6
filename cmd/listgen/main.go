// Command listgen writes the copies of riskapi's lists from their sources
// (internal/listgen): run as `go generate ./internal/changes/`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/riskapi/riskapi/internal/listgen"
)

func main() {
	root := flag.String("root", ".", "the module's root directory")
	flag.Parse()
	if err := listgen.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
