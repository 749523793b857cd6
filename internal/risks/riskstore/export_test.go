package riskstore

// WalkingAt returns a copy of s whose q searches on SQLite walk n rows before they
// read the set of matches (walkWindow), for tests of each way a page is read.
func WalkingAt(s *Store, n int) *Store {
	c := *s
	c.walkWindow = n
	return &c
}

// Countable is countable: whether a heat map of q reads the counts.
var Countable = countable

// Columns are the columns every write of a risk names: all of row's.
var Columns = columns
