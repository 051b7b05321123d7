package ecs

import "sync/atomic"

// Census counts the bodies of every Area that joined it, as they spawn and
// despawn: a host with thousands of Areas, most of them frozen, reads its
// total in one load instead of visiting each Area. The zero value is an
// empty census. Safe from any goroutine.
type Census struct{ entities atomic.Int64 }

// Entities is the number of bodies in the Areas that joined the census.
func (c *Census) Entities() int { return int(c.entities.Load()) }

// JoinCensus counts the Area's bodies in c from now on, those it has
// already included; an Area joins one census at most. Call it from the
// ticking goroutine (or before the Area runs).
func (a *Area) JoinCensus(c *Census) {
	if a.census != nil {
		panic("ecs: the Area has joined a census already")
	}
	a.census = c
	c.entities.Add(int64(a.entities))
}

// LeaveCensus takes the Area's bodies out of its census, when the Area is
// let go of; an Area in no census does nothing. Call it from the ticking
// goroutine.
func (a *Area) LeaveCensus() {
	if c := a.census; c != nil {
		c.entities.Add(-int64(a.entities))
		a.census = nil
	}
}

// counted records n more bodies (or fewer, n < 0) in the Area and its
// census.
func (a *Area) counted(n int) {
	a.entities += n
	if a.census != nil {
		a.census.entities.Add(int64(n))
	}
}
