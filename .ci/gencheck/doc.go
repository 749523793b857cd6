// Package gencheck holds nothing but the module that compiles what the Go generators
// make of docs/openapi.yaml (.ci/generators); its go.mod pins their runtimes.
package gencheck
