package registry

import (
	"context"
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
	type asked struct {
		h    *Host
		id   uint64
		call *control.Call[uint64, *control.Inspection]
	}
	r.mu.Lock()
	var all []asked
	for _, h := range r.hosts {
		r.inspectSeq++
		a := asked{h: h, id: r.inspectSeq}
		all = append(all, a)
	}
	r.mu.Unlock()
	for i := range all {
		a := &all[i]
		call, err := a.h.inspections.Expect(a.id)
		if err != nil {
			continue
		}
		a.call = call
		if err := a.h.conn.Send(&control.Inspect{ID: a.id}); err != nil {
			call.Cancel()
			a.call = nil
		}
	}
	wctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	out := make([]apijson.HostInspection, 0, len(all))
	for _, a := range all {
		hi := apijson.HostInspection{Host: a.h.ID, Name: a.h.Name, PID: a.h.PID, Areas: []apijson.AreaInspection{}} // [] rather than null
		if a.call == nil {
			hi.Error = "host went away"
		} else if in, err := a.call.Wait(wctx); err != nil {
			hi.Error = "no answer in time"
			select {
			case <-a.h.gone:
				hi.Error = "host went away"
			default:
			}
		} else {
			hi.Areas = r.withTemplates(in.Areas)
		}
		out = append(out, hi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
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
