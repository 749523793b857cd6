package risks

import (
	"cmp"
	"slices"
)

// Cell is a place on the heat map: a likelihood and an impact, each 1–5.
type Cell struct {
	Likelihood int `json:"likelihood"`
	Impact     int `json:"impact"`
}

// CellOf returns the cell of factors l and i; nil when either is missing or out of
// 1–5 (an unassessed risk is on no cell).
func CellOf(l, i *int) *Cell {
	if l == nil || i == nil || *l < 1 || *l > 5 || *i < 1 || *i > 5 {
		return nil
	}
	return &Cell{Likelihood: *l, Impact: *i}
}

// Past is a risk as its audit entries since an instant tell of it then, on one
// basis (docs/register.md, "Moved since"): created since (New), or the value then of
// each factor that changed since. A factor that did not change is as it is now.
type Past struct {
	New                bool
	Likelihood, Impact *int
	// LikelihoodChanged and ImpactChanged say which factors changed since.
	LikelihoodChanged, ImpactChanged bool
}

// Move counts the risks that were in From and are now in To (nil: on no cell —
// From, the risk did not exist or was unassessed then; To, it is unassessed now).
type Move struct {
	From  *Cell `json:"from"`
	To    *Cell `json:"to"`
	Count int   `json:"count"`
}

// Now is a risk's factors of a basis as they are now.
type Now struct{ Likelihood, Impact *int }

// MovesOf returns the moves of the risks in now (the risks the heat map selects,
// among those past names): each risk whose cell then differs from its cell now,
// counted by (from, to), ordered by from then to (nil first), likelihood-major.
func MovesOf(past map[string]Past, now map[string]Now) []Move {
	type key struct{ from, to Cell }
	counts := map[key]int{}
	for id, cur := range now {
		p, ok := past[id]
		if !ok {
			continue
		}
		to := CellOf(cur.Likelihood, cur.Impact)
		var from *Cell
		if !p.New {
			l, i := cur.Likelihood, cur.Impact
			if p.LikelihoodChanged {
				l = p.Likelihood
			}
			if p.ImpactChanged {
				i = p.Impact
			}
			from = CellOf(l, i)
		}
		if from == nil && to == nil || from != nil && to != nil && *from == *to {
			continue
		}
		counts[key{orZero(from), orZero(to)}]++
	}
	out := make([]Move, 0, len(counts))
	for k, n := range counts {
		out = append(out, Move{From: orNil(k.from), To: orNil(k.to), Count: n})
	}
	slices.SortFunc(out, func(a, b Move) int {
		return cmp.Or(compareCells(a.From, b.From), compareCells(a.To, b.To))
	})
	return out
}

func orZero(c *Cell) Cell {
	if c == nil {
		return Cell{}
	}
	return *c
}

func orNil(c Cell) *Cell {
	if c == (Cell{}) {
		return nil
	}
	return &c
}

func compareCells(a, b *Cell) int {
	z, y := orZero(a), orZero(b)
	return cmp.Or(cmp.Compare(z.Likelihood, y.Likelihood), cmp.Compare(z.Impact, y.Impact))
}
