package registry

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/leyworks/ley/director/apijson"
	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// inspectTimeout bounds the wait for every host's inspection.
const inspectTimeout = 5 * time.Second

// Inspect asks every registered host for its Areas' ground truth and
// waits (bounded) for the answers.
func (r *Registry) Inspect(ctx context.Context) []apijson.HostInspection {
	answers := r.ask(ctx, false)
	out := make([]apijson.HostInspection, 0, len(answers))
	for _, a := range answers {
		hi := apijson.HostInspection{Host: a.h.ID, Name: a.h.Name, PID: a.h.PID, Areas: []apijson.AreaInspection{}} // [] rather than null
		if a.err != "" {
			hi.Error = a.err
		} else {
			hi.Areas = r.withTemplates(a.in.Areas)
		}
		out = append(out, hi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// LiveItems asks every registered host for its Areas' items as they are
// now (control.AreaItems), for the director's live count: by Area, the
// Areas that answered; and the problems of the rest (a host or an Area
// that did not answer), whose stored state is all there is to count.
func (r *Registry) LiveItems(ctx context.Context) (map[store.AreaID]*control.AreaItems, []string) {
	items := map[store.AreaID]*control.AreaItems{}
	var problems []string
	for _, a := range r.ask(ctx, true) {
		if a.err != "" {
			problems = append(problems, fmt.Sprintf("host %d (%s): %s", a.h.ID, a.h.Name, a.err))
			continue
		}
		for _, st := range a.in.Areas {
			if st.Error != "" || st.Items == nil {
				problems = append(problems, fmt.Sprintf("area %d: %s", st.Area, cmp.Or(st.Error, "no items in its answer")))
				continue
			}
			items[store.AreaID(st.Area)] = st.Items
		}
	}
	sort.Strings(problems)
	return items, problems
}

// answer is one host's answer to an inspection, or why there is none.
type answer struct {
	h   *Host
	in  *control.Inspection
	err string
}

// ask sends every registered host an Inspect (with its Areas' items if
// items) and waits, bounded by inspectTimeout, for the answers.
func (r *Registry) ask(ctx context.Context, items bool) []answer {
	type asked struct {
		h    *Host
		id   uint64
		call *control.Call[uint64, *control.Inspection]
	}
	r.mu.Lock()
	var all []asked
	for _, h := range r.hosts {
		r.inspectSeq++
		all = append(all, asked{h: h, id: r.inspectSeq})
	}
	r.mu.Unlock()
	for i := range all {
		a := &all[i]
		call, err := a.h.inspections.Expect(a.id)
		if err != nil {
			continue
		}
		a.call = call
		if err := a.h.conn.Send(&control.Inspect{ID: a.id, Items: items}); err != nil {
			call.Cancel()
			a.call = nil
		}
	}
	wctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	out := make([]answer, 0, len(all))
	for _, a := range all {
		ans := answer{h: a.h}
		if a.call == nil {
			ans.err = "host went away"
		} else if in, err := a.call.Wait(wctx); err != nil {
			ans.err = "no answer in time"
			select {
			case <-a.h.gone:
				ans.err = "host went away"
			default:
			}
		} else {
			ans.in = in
		}
		out = append(out, ans)
	}
	return out
}

// withTemplates pairs each Area's state with the template of its live
// record (kept by inspection: every Area in it is live on its host).
func (r *Registry) withTemplates(states []control.AreaState) []apijson.AreaInspection {
	out := make([]apijson.AreaInspection, len(states))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, st := range states {
		out[i].AreaState = st
		if l := r.areas[store.AreaID(st.Area)]; l != nil {
			out[i].Template = l.Template
		}
	}
	return out
}

// inspection routes a host's answer to its waiter: an answer to no
// inspection of this host is refused, and so is each Area in it that the
// registry did not place on this host at that epoch (it is left out).
func (r *Registry) inspection(h *Host, m *control.Inspection) {
	if !h.inspections.Pending(m.ID) {
		r.refuseHost(h, m.Type(), RefuseUnsolicited, 0, "id", m.ID)
		return
	}
	var refused []string
	var refusedAreas []uint32
	r.mu.Lock()
	kept := m.Areas[:0]
	for _, a := range m.Areas {
		if _, reason := r.ownedLocked(h, a.Area, a.Epoch, true); reason != "" {
			refused, refusedAreas = append(refused, reason), append(refusedAreas, a.Area)
			continue
		}
		kept = append(kept, a)
	}
	m.Areas = kept
	r.mu.Unlock()
	for i, reason := range refused {
		r.refuseHost(h, m.Type(), reason, refusedAreas[i])
	}
	h.inspections.Answer(m.ID, m)
}
