package riskapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
)

// Page is one page of a list endpoint, the envelope
// {"data":[…],"hasMore":bool,"nextCursor":string|null}.
type Page[T any] struct {
	// Data holds the items of this page, in the server's order.
	Data []*T
	// HasMore reports whether another page follows.
	HasMore bool
	// NextCursor is the cursor of the next page; empty when there is none.
	// Pass it as the Cursor of a later list call to resume there.
	NextCursor string
	// LastResponse describes the HTTP exchange that fetched this page.
	LastResponse *APIResponse
}

// pageWire is Page's JSON form; nextCursor may be null.
type pageWire[T any] struct {
	Data       []*T    `json:"data"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

// UnmarshalJSON decodes the list envelope. A bare JSON array is accepted too,
// as a single, last page, so that a list route answering without the
// envelope still works.
func (p *Page[T]) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		p.HasMore, p.NextCursor = false, ""
		return json.Unmarshal(b, &p.Data)
	}
	var w pageWire[T]
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	p.Data, p.HasMore, p.NextCursor = w.Data, w.HasMore, ""
	if w.NextCursor != nil {
		p.NextCursor = *w.NextCursor
	}
	return nil
}

// respondable is an item of a list that records the exchange that returned it
// (its LastResponse).
type respondable[T any] interface {
	*T
	setLastResponse(*APIResponse)
}

// getPage fetches one page of the list at path with query q and gives the page and
// each of its items the exchange's APIResponse.
func getPage[T any, P respondable[T]](ctx context.Context, c *Client, path string, q url.Values, params *Params) (*Page[T], error) {
	page := new(Page[T])
	info, err := c.doJSON(ctx, http.MethodGet, path, q, params, nil, page)
	if err != nil {
		return nil, err
	}
	page.LastResponse = info
	for _, it := range page.Data {
		if it != nil {
			P(it).setLastResponse(info)
		}
	}
	return page, nil
}

// paginate walks pages from cursor on, fetching the next page only once the
// consumer has taken every item of the current one, and stops fetching as
// soon as the consumer breaks out of its loop. An error is yielded once, as
// (nil, err), and ends the sequence.
func paginate[T any](ctx context.Context, cursor string, fetch func(ctx context.Context, cursor string) (*Page[T], error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		seen := map[string]bool{}
		for {
			page, err := fetch(ctx, cursor)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, item := range page.Data {
				if item == nil {
					continue // a null entry carries nothing to hand out
				}
				if !yield(item, nil) {
					return
				}
			}
			if !page.HasMore {
				return
			}
			// Guard against a server that claims more pages but
			// gives no way, or a circular way, to reach them: the
			// loop would otherwise never end.
			if page.NextCursor == "" {
				yield(nil, fmt.Errorf("riskapi: list: hasMore is true but nextCursor is empty"))
				return
			}
			if seen[page.NextCursor] {
				yield(nil, fmt.Errorf("riskapi: list: nextCursor %q repeats an earlier cursor", page.NextCursor))
				return
			}
			seen[page.NextCursor] = true
			cursor = page.NextCursor
		}
	}
}

// Collect drains a sequence from a List method into a slice. It returns the
// items gathered before the first error along with that error. Use it only
// when the list is known to be small; ranging over the sequence keeps one page
// in memory at a time.
func Collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}
