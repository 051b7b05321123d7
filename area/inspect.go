package area

import (
	"slices"
	"sort"
	"time"

	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/control"
)

// inspectWait bounds the wait for every Area's answer to an inspection: a
// frozen Area answers at its next poll (a quarter second at most).
const inspectWait = 2 * time.Second

// inspect answers the director's inspect query with every Area's ground
// truth, each read on the Area's own goroutine, or as it was parked
// (parkedView) (link reader goroutine; it waits, bounded, for the
// Areas).
func (h *Host) inspect(m *control.Inspect) {
	h.mu.Lock()
	areas := make([]*hostArea, 0, len(h.areas))
	for _, ha := range h.areas {
		areas = append(areas, ha)
	}
	h.mu.Unlock()
	answers := make(chan control.AreaState, len(areas))
	for _, ha := range areas {
		if pv := ha.parkedView.Load(); pv != nil { // read as it is parked: not built again for a look
			answers <- pv.state(ha.id, m.Items, time.Now())
			continue
		}
		ha.a.PostControl(func(*ecs.Area) {
			st := ha.state(time.Now())
			if m.Items {
				st.Items = ha.items()
				if st.Items == nil {
					st.Error = "its items could not be read"
				}
			}
			answers <- st
		})
	}
	out := &control.Inspection{ID: m.ID, Areas: make([]control.AreaState, 0, len(areas))}
	seen := map[uint32]bool{}
	timeout := time.After(inspectWait)
collect:
	for range areas {
		select {
		case st := <-answers:
			seen[st.Area] = true
			out.Areas = append(out.Areas, st)
		case <-timeout:
			break collect
		}
	}
	for _, ha := range areas {
		if !seen[ha.id] {
			out.Areas = append(out.Areas, control.AreaState{Area: ha.id, Error: "no answer within " + inspectWait.String()})
		}
	}
	sort.Slice(out.Areas, func(i, j int) bool { return out.Areas[i].Area < out.Areas[j].Area })
	h.link.send(out)
}

// items reads the Area's items as its next snapshot would carry them (nil
// if a state fails to save: the host logs it). Area goroutine.
func (ha *hostArea) items() *control.AreaItems {
	blob, err := ha.eng.Save()
	if err != nil {
		ha.h.log.Error("inspect items", "area", ha.id, "err", err)
		return nil
	}
	chars, err := ha.characters()
	if err != nil {
		ha.h.log.Error("inspect items", "area", ha.id, "err", err)
		return nil
	}
	return &control.AreaItems{W: int(ha.a.Grid.W()), H: int(ha.a.Grid.H()), Blob: blob, Characters: chars}
}

// state reads the Area's ground truth: bodies counted in the world, next
// to the sessions' bookkeeping. Area goroutine; it allocates (a query).
func (ha *hostArea) state(now time.Time) control.AreaState {
	a := ha.a
	st := control.AreaState{Area: ha.id, Epoch: ha.epoch, Active: a.Mode() == ecs.Active, Tick: a.Tick, Grants: len(ha.grants)}
	q := ecs.NewFilter2[ecs.Position, ecs.Body]().Query(&a.World)
	for q.Next() {
		st.Bodies++
		e := q.Entity()
		switch {
		case ha.players.Has(e):
			st.Players++
			st.Accounts = append(st.Accounts, ha.players.Get(e).Account)
		case a.IsCreature(e):
			st.Creatures++
		}
	}
	grace := ha.h.cfg.ResumeGrace
	for _, b := range ha.order {
		switch {
		case b.peer != nil:
			st.Bound++
		case now.Sub(b.droppedAt) < grace:
			st.Dropped++
		case now.Sub(b.droppedAt) >= grace+time.Second:
			st.Overdue++
		default: // its grace just ended; the next chores remove it
			st.Dropped++
		}
	}
	for _, c := range ha.crossings {
		if ha.bodies[c.b.account] == c.b {
			st.Crossing++
		}
	}
	slices.Sort(st.Accounts)
	st.SinceUS = make([]int64, len(st.Accounts))
	for i, acct := range st.Accounts {
		if b := ha.bodies[acct]; b != nil {
			st.SinceUS[i] = b.since.UnixMicro()
		}
	}
	st.ReadUS = now.UnixMicro()
	return st
}
