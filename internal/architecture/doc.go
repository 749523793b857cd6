// Package architecture holds no code: its tests read the module's own source and
// fail when a rule leaves the one home docs/architecture.md gives it (a store that
// classifies errors by hand, a second keyset pager, a 404 mapped outside the
// not-found table, a default stated outside internal/config, a function over 80
// lines), or when a list kept in several files drifts from its source.
package architecture
