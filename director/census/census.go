// Package census counts the items a realm's store holds and checks the
// conservation invariant of docs/items.md: no item stack id twice, and,
// for every kind, the items present are those the Areas' ledgers say were
// created less those destroyed. It reads what store.Store.Holdings gives
// (one instant of the store), so it judges the store as a crash would
// leave it.
package census

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/leyworks/ley/store"
	"github.com/leyworks/ley/systems/persist/blob"
)

// MaxProblems bounds the problems a Census lists (the count goes on).
const MaxProblems = 20

// Kind is the count of one item kind.
type Kind struct {
	Kind      uint16 `json:"kind"`
	Present   int64  `json:"present"`
	Created   int64  `json:"created"`
	Destroyed int64  `json:"destroyed"`
}

// Census is what a count found.
type Census struct {
	// Stacks is how many stacks were counted; Areas and Characters how
	// many blobs and states held them.
	Stacks, Areas, Characters int
	// Kinds are the counts by kind, sorted by kind.
	Kinds []Kind
	// Problems are the first MaxProblems violations (an id twice, a kind
	// whose count disagrees with its ledger, a state that does not
	// decode); Violations counts them all.
	Problems   []string
	Violations int
}

// OK reports whether the count found no violation.
func (c *Census) OK() bool { return c.Violations == 0 }

// Err returns the violations as an error, nil when there are none.
func (c *Census) Err() error {
	if c.OK() {
		return nil
	}
	errs := make([]error, 0, len(c.Problems))
	for _, p := range c.Problems {
		errs = append(errs, errors.New(p))
	}
	return fmt.Errorf("%d item violations: %w", c.Violations, errors.Join(errs...))
}

// Count counts the items of hs.
func Count(hs []store.Holding) *Census {
	c := &Census{}
	problem := func(format string, args ...any) {
		c.Violations++
		if len(c.Problems) < MaxProblems {
			c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
		}
	}
	where := map[uint64]string{}
	kinds := map[uint16]*Kind{}
	kind := func(k uint16) *Kind {
		if kinds[k] == nil {
			kinds[k] = &Kind{Kind: k}
		}
		return kinds[k]
	}
	add := func(s blob.Stack, at string) {
		if s.Count == 0 {
			return
		}
		if was, dup := where[s.ID]; dup {
			problem("item %d (kind %d) twice: %s and %s", s.ID, s.Kind, was, at)
		}
		where[s.ID] = at
		kind(s.Kind).Present += int64(s.Count)
		c.Stacks++
	}
	for _, h := range hs {
		switch {
		case h.Area != 0:
			if len(h.State) == 0 {
				continue
			}
			b, err := blob.Decode(h.State, h.W, h.H)
			if err != nil {
				problem("area %d: %v", h.Area, err)
				continue
			}
			c.Areas++
			for _, p := range b.Placed {
				add(p.Stack, fmt.Sprintf("placed in area %d at (%d,%d)", h.Area, p.X, p.Y))
				for _, s := range p.Contents {
					add(s, fmt.Sprintf("in the container of area %d at (%d,%d)", h.Area, p.X, p.Y))
				}
			}
			for _, t := range b.Created {
				kind(t.Kind).Created += int64(t.Count)
			}
			for _, t := range b.Destroyed {
				kind(t.Kind).Destroyed += int64(t.Count)
			}
		case h.Account != 0:
			st, err := blob.DecodeCharacter(h.State)
			if err != nil {
				problem("character %d: %v", h.Account, err)
				continue
			}
			c.Characters++
			for _, s := range st.Inventory {
				add(s, fmt.Sprintf("carried by character %d", h.Account))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		n := kinds[k]
		if n.Present != n.Created-n.Destroyed {
			problem("kind %d: %d present; %d created, %d destroyed", k, n.Present, n.Created, n.Destroyed)
		}
		c.Kinds = append(c.Kinds, *n)
	}
	return c
}
