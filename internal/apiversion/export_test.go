package apiversion

// WholeDecode returns s rendering every answer by decoding it whole, the path the
// bytes' rendering must agree with.
func WholeDecode(s *Set) *Set {
	whole := *s
	whole.wholeDecode = true
	return &whole
}
