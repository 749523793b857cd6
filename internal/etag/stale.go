package etag

import "strconv"

// StaleDetail is the detail of the 412 PRECONDITION_FAILED refusing a write whose
// If-Match l did not name the current version of a resource tagged by its version
// (the tag's text is the version in decimal: riskapi's risks, actions and webhook
// endpoints; docs/openapi.yaml, "Conditional writes"). noun names the resource
// ("risk"), current its version as stored now. It says which of three things
// happened, since each asks the client for something else:
//
//   - a weak tag of the very version: If-Match compares strongly (RFC 9110,
//     section 13.1.1), so send the tag as the ETag header gave it;
//   - only versions the resource never had (above current, or no version at all,
//     or a number not written as the ETag writes it, "04"):
//     the tag came from somewhere else, nothing changed;
//   - otherwise the resource changed since the client read it.
//
// Each ends by pointing at the problem's "current" member, the resource as stored.
func StaleDetail(l List, noun string, current int64) string {
	v := strconv.FormatInt(current, 10)
	now := Strong(v)
	if l.MatchWeak(v) && !l.MatchStrong(v) {
		return "If-Match compares ETags strongly (RFC 9110): the weak W/" + now + " never matches; send " + now +
			` as the ETag header gave it. "current" holds the ` + noun + " as stored now"
	}
	issued := false
	for _, t := range l.Tags {
		// Only a version's own text was ever issued: "04" or "+4" is no tag of version 4.
		if n, err := strconv.ParseInt(t.Opaque, 10, 64); err == nil && n >= 1 && n <= current && strconv.FormatInt(n, 10) == t.Opaque {
			issued = true
		}
	}
	if !issued {
		return "If-Match names no version this " + noun + " has had (it is at " + now +
			`; versions start at "1" and rise by one with each write): "current" holds it as stored now`
	}
	return "If-Match does not name the " + noun + "'s version " + now +
		` (it changed since you read it): "current" holds it as stored now`
}
