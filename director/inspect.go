package director

import (
	"net/http"
	"sort"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// inspectTimeout bounds the wait for every host's inspection.
const inspectTimeout = 5 * time.Second

// HostInspection is one host's answer to an inspection: the ground truth
// of every Area it runs (see control.AreaState).
type HostInspection struct {
	Host  uint32           `json:"host"`
	Name  string           `json:"name"`
	PID   int              `json:"pid"`
	Areas []AreaInspection `json:"areas"`
	Error string           `json:"error,omitempty"`
}

// AreaInspection is one Area of a host's inspection: the host's ground
// truth and the template the director made the Area from.
type AreaInspection struct {
	control.AreaState
	Template string `json:"template"`
}

// inspectHosts asks every registered host for its Areas' ground truth and
// waits (bounded) for the answers.
func (d *Director) inspectHosts() []HostInspection {
	type asked struct {
		h  *host
		id uint64
		ch chan *control.Inspection
	}
	d.mu.Lock()
	var all []asked
	for _, h := range d.hosts {
		d.inspectSeq++
		a := asked{h, d.inspectSeq, make(chan *control.Inspection, 1)}
		h.inspections[a.id] = a.ch
		all = append(all, a)
	}
	d.mu.Unlock()
	for _, a := range all {
		_ = a.h.conn.Send(&control.Inspect{ID: a.id}) // a host whose link fails is reported gone below
	}
	out := make([]HostInspection, 0, len(all))
	deadline := time.After(inspectTimeout)
	for _, a := range all {
		hi := HostInspection{Host: a.h.id, Name: a.h.name, PID: a.h.pid, Areas: []AreaInspection{}} // [] rather than null
		select {
		case in := <-a.ch:
			hi.Areas = d.withTemplates(in.Areas)
		case <-a.h.gone:
			hi.Error = "host went away"
		case <-deadline:
			hi.Error = "no answer in time"
		}
		out = append(out, hi)
	}
	d.mu.Lock()
	for _, a := range all {
		delete(a.h.inspections, a.id)
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// withTemplates pairs each Area's state with the template of its live
// record (kept by inspection: every Area in it is live on its host).
func (d *Director) withTemplates(states []control.AreaState) []AreaInspection {
	out := make([]AreaInspection, len(states))
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, st := range states {
		out[i].AreaState = st
		if l := d.areas[store.AreaID(st.Area)]; l != nil {
			out[i].Template = l.template
		}
	}
	return out
}

// inspection routes a host's answer to its waiter: an answer to no
// inspection of this host is refused, and so is each Area in it that the
// director did not place on this host at that epoch (it is left out).
func (d *Director) inspection(h *host, m *control.Inspection) {
	d.mu.Lock()
	ch := h.inspections[m.ID]
	delete(h.inspections, m.ID)
	var refused []string
	var refusedAreas []uint32
	if ch != nil {
		kept := m.Areas[:0]
		for _, a := range m.Areas {
			if _, reason := d.ownedLocked(h, a.Area, a.Epoch, true); reason != "" {
				refused, refusedAreas = append(refused, reason), append(refusedAreas, a.Area)
				continue
			}
			kept = append(kept, a)
		}
		m.Areas = kept
	}
	d.mu.Unlock()
	if ch == nil {
		d.refuseHost(h, m.Type(), refuseUnsolicited, 0, "id", m.ID)
		return
	}
	for i, reason := range refused {
		d.refuseHost(h, m.Type(), reason, refusedAreas[i])
	}
	ch <- m
}

// inspect: GET /v1/admin/inspect (admins): every host's Areas as their
// worlds hold them (player, creature and body counts) beside the hosts'
// session bookkeeping (bound, dropped within the grace, overdue,
// crossing, grants), read on each Area's goroutine.
func (d *Director) inspect(w http.ResponseWriter, r *http.Request, acct store.Account) (int, any, *apiError) {
	if !acct.Admin {
		return 0, nil, errForbidden
	}
	return http.StatusOK, map[string]any{"hosts": d.inspectHosts()}, nil
}
