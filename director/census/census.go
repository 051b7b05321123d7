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

// Counter counts holdings one at a time (store.Store.Holdings' fn); its
// zero value is ready. It keeps each stack's id and place, and each
// kind's tally: not the blobs.
type Counter struct {
	c     Census
	where map[uint64]string
	kinds map[uint16]*Kind
}

func (n *Counter) problem(format string, args ...any) {
	n.c.Violations++
	if len(n.c.Problems) < MaxProblems {
		n.c.Problems = append(n.c.Problems, fmt.Sprintf(format, args...))
	}
}

func (n *Counter) kind(k uint16) *Kind {
	if n.kinds == nil {
		n.kinds = map[uint16]*Kind{}
	}
	if n.kinds[k] == nil {
		n.kinds[k] = &Kind{Kind: k}
	}
	return n.kinds[k]
}

func (n *Counter) add(s blob.Stack, at string) {
	if s.Count == 0 {
		return
	}
	if n.where == nil {
		n.where = map[uint64]string{}
	}
	if was, dup := n.where[s.ID]; dup {
		n.problem("item %d (kind %d) twice: %s and %s", s.ID, s.Kind, was, at)
	}
	n.where[s.ID] = at
	n.kind(s.Kind).Present += int64(s.Count)
	n.c.Stacks++
}

// Add counts the items of h.
func (n *Counter) Add(h store.Holding) {
	switch {
	case h.Area != 0 && len(h.State) > 0:
		b, err := blob.Decode(h.State, h.W, h.H)
		if err != nil {
			n.problem("area %d: %v", h.Area, err)
			return
		}
		n.c.Areas++
		for _, p := range b.Placed {
			n.add(p.Stack, fmt.Sprintf("placed in area %d at (%d,%d)", h.Area, p.X, p.Y))
			for _, s := range p.Contents {
				n.add(s, fmt.Sprintf("in the container of area %d at (%d,%d)", h.Area, p.X, p.Y))
			}
		}
		for _, t := range b.Created {
			n.kind(t.Kind).Created += int64(t.Count)
		}
		for _, t := range b.Destroyed {
			n.kind(t.Kind).Destroyed += int64(t.Count)
		}
	case h.Account != 0:
		st, err := blob.DecodeCharacter(h.State)
		if err != nil {
			n.problem("character %d: %v", h.Account, err)
			return
		}
		n.c.Characters++
		for _, s := range st.Inventory {
			n.add(s, fmt.Sprintf("carried by character %d", h.Account))
		}
		for _, s := range st.Stash {
			n.add(s, fmt.Sprintf("in the stash of character %d", h.Account))
		}
	}
}

// Census checks each kind's count against its ledger and returns what
// the count found.
func (n *Counter) Census() *Census {
	c := n.c
	c.Kinds = nil
	for _, k := range slices.Sorted(maps.Keys(n.kinds)) {
		t := n.kinds[k]
		if t.Present != t.Created-t.Destroyed {
			c.Violations++
			if len(c.Problems) < MaxProblems {
				c.Problems = append(c.Problems, fmt.Sprintf("kind %d: %d present; %d created, %d destroyed", k, t.Present, t.Created, t.Destroyed))
			}
		}
		c.Kinds = append(c.Kinds, *t)
	}
	return &c
}
