package flowfield

import (
	"fmt"
	"time"
)

// DefaultBudget is the work a Registry's Run does per call when its Config
// names none: about a tenth of a 20 Hz tick's share of one core.
const DefaultBudget = 2 * time.Millisecond

// checkEvery is how many squares a sweep expands between looks at the
// clock: the clock is read once per chunk, never per square.
const checkEvery = 1024

// Config describes a Registry.
type Config struct {
	// W and H are the grid's size in squares.
	W, H int
	// Diagonal allows the four diagonal steps.
	Diagonal bool
	// Budget caps the sweeping one Run does (checked every 1,024 squares
	// expanded, so a call may overrun it by one chunk). Zero means
	// DefaultBudget; a negative budget means no cap.
	Budget time.Duration
	// Reach bounds a field to the squares within that walking cost of its
	// target (farther ones stay unreached): a sweep expands about
	// (2*Reach)^2 squares, not the whole grid. Zero means no bound.
	Reach int32
}

// DefaultConfig returns a Config for a w x h grid with diagonal steps and
// DefaultBudget.
func DefaultConfig(w, h int) Config {
	return Config{W: w, H: h, Diagonal: true, Budget: DefaultBudget}
}

// ID names a field in its Registry. It stays valid until its last user
// releases it; then the Registry may hand it out for another target.
type ID int32

// NoField is the ID of no field.
const NoField ID = -1

type entry struct {
	key      uint64
	refs     int32
	want     int32 // the target's current square
	pub      Field // published: Dist nil until the first sweep is done
	build    Field // being built by the running sweep
	queued   bool
	building bool
	dirty    bool // a blocking change came while building
}

// Registry holds the flow fields of one grid, shared by key (a target's
// entity ID, say) and counted by users, and the work queue that
// recomputes them.
//
// A Registry belongs to one goroutine. Its buffers come from a pool it
// keeps: once every field has been swept twice, nothing allocates.
type Registry struct {
	cfg   Config
	floor []int32

	entries []entry
	free    []ID
	queue   []ID // FIFO of entries to sweep; the head is the one sweeping
	sw      sweep

	distPool [][]int32
	dirPool  [][]uint8

	sweeps   uint64
	expanded uint64
}

// NewRegistry returns an empty Registry over floor (the grid's floor layer,
// w*h squares, aliased: it is read while sweeping).
func NewRegistry(cfg Config, floor []int32) (*Registry, error) {
	if cfg.W < 1 || cfg.H < 1 || len(floor) != cfg.W*cfg.H {
		return nil, fmt.Errorf("flowfield: floor of %d squares for a %dx%d registry", len(floor), cfg.W, cfg.H)
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	return &Registry{cfg: cfg, floor: floor}, nil
}

// Acquire returns the field of key, which stands on square target, adding
// one user: the existing field if key has one (retargeted to target),
// a new one queued for its first sweep otherwise. Fields are found by a
// scan over the live ones: Acquire is for spawns and target changes, not
// per tick.
func (r *Registry) Acquire(key uint64, target int32) ID {
	for i := range r.entries {
		e := &r.entries[i]
		if e.refs > 0 && e.key == key {
			e.refs++
			r.Retarget(ID(i), target)
			return ID(i)
		}
	}
	var id ID
	if n := len(r.free); n > 0 {
		id = r.free[n-1]
		r.free = r.free[:n-1]
	} else {
		id = ID(len(r.entries))
		r.entries = append(r.entries, entry{})
	}
	e := &r.entries[id]
	*e = entry{key: key, refs: 1, want: target}
	r.enqueue(id)
	return id
}

// Users is the number of users of id (0 for a released field).
func (r *Registry) Users(id ID) int { return int(r.entries[id].refs) }

// Release drops one user of id; the last one frees the field and returns
// its buffers to the pool.
func (r *Registry) Release(id ID) {
	e := &r.entries[id]
	if e.refs <= 0 {
		return
	}
	e.refs--
	if e.refs > 0 {
		return
	}
	for i, q := range r.queue {
		if q == id {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			break
		}
	}
	r.put(&e.pub)
	r.put(&e.build)
	*e = entry{}
	r.free = append(r.free, id)
}

// Retarget tells the Registry that id's target now stands on square target.
// Only a change of square queues a sweep; until it is done, Field returns
// the old field.
func (r *Registry) Retarget(id ID, target int32) {
	e := &r.entries[id]
	if e.want == target {
		return
	}
	e.want = target
	r.enqueue(id)
}

// Field returns id's latest finished field, or nil before its first sweep
// is done. The Field stays valid until the next Acquire, Run, Release or
// Invalidate.
func (r *Registry) Field(id ID) *Field {
	e := &r.entries[id]
	if e.pub.Dist == nil {
		return nil
	}
	return &e.pub
}

// Invalidate reports that square c's floor changed (a wall placed or
// removed). Every field whose reached area includes c or a neighbour of c
// is queued for a new sweep; the one being swept is swept again after.
// Cost: O(fields).
func (r *Registry) Invalidate(c int32) {
	w, h := int32(r.cfg.W), int32(r.cfg.H)
	x, y := c%w, c/w
	for i := range r.entries {
		e := &r.entries[i]
		if e.refs == 0 {
			continue
		}
		if e.building {
			e.dirty = true
			continue
		}
		if e.pub.Dist == nil {
			continue // queued for its first sweep already
		}
		touched := false
		for dy := int32(-1); dy <= 1 && !touched; dy++ {
			for dx := int32(-1); dx <= 1; dx++ {
				nx, ny := x+dx, y+dy
				if nx >= 0 && ny >= 0 && nx < w && ny < h && e.pub.Dist[ny*w+nx] != Unreached {
					touched = true
					break
				}
			}
		}
		if touched {
			r.enqueue(ID(i))
		}
	}
}

// Pending is the number of fields waiting for (or in) a sweep.
func (r *Registry) Pending() int { return len(r.queue) }

// Sweeps counts the sweeps finished since the Registry was made.
func (r *Registry) Sweeps() uint64 { return r.sweeps }

// Expanded counts the squares expanded by all sweeps so far.
func (r *Registry) Expanded() uint64 { return r.expanded }

// Run works the queue for at most the Config's Budget: it resumes the
// sweep in progress, publishes each finished field at once, and starts the
// next. It reports whether the queue is empty. It reads the clock once per
// 1,024 squares expanded.
func (r *Registry) Run() bool { return r.run(r.cfg.Budget) }

// RunAll works the queue until it is empty, whatever the budget.
func (r *Registry) RunAll() { r.run(-1) }

func (r *Registry) run(budget time.Duration) bool {
	if len(r.queue) == 0 {
		return true
	}
	var t0 time.Time
	if budget > 0 {
		t0 = time.Now()
	}
	for len(r.queue) > 0 {
		id := r.queue[0]
		e := &r.entries[id]
		if !e.building {
			r.get(&e.build)
			r.sw.start(&e.build, r.floor, e.want)
			r.sw.reach = r.cfg.Reach
			e.building, e.dirty = true, false
		}
		n, done := r.sw.run(&e.build, r.floor, r.cfg.Diagonal, checkEvery)
		r.expanded += uint64(n)
		if done {
			r.finish(id)
		}
		if budget > 0 && time.Since(t0) >= budget {
			break
		}
	}
	return len(r.queue) == 0
}

// finish publishes the head's finished sweep and requeues it if its target
// moved or a blocking change came meanwhile.
func (r *Registry) finish(id ID) {
	e := &r.entries[id]
	e.pub, e.build = e.build, e.pub
	e.building = false
	r.sweeps++
	r.queue = append(r.queue[:0], r.queue[1:]...)
	e.queued = false
	if e.dirty || e.pub.Target != e.want {
		e.dirty = false
		r.enqueue(id)
	}
}

func (r *Registry) enqueue(id ID) {
	e := &r.entries[id]
	if e.queued {
		return
	}
	e.queued = true
	r.queue = append(r.queue, id)
}

// get fills f's buffers from the pool (or allocates them).
func (r *Registry) get(f *Field) {
	f.W, f.H = int32(r.cfg.W), int32(r.cfg.H)
	if f.Dist != nil {
		return
	}
	n := r.cfg.W * r.cfg.H
	if k := len(r.distPool); k > 0 {
		f.Dist, f.Dir = r.distPool[k-1], r.dirPool[k-1]
		r.distPool, r.dirPool = r.distPool[:k-1], r.dirPool[:k-1]
		return
	}
	f.Dist, f.Dir = make([]int32, n), make([]uint8, n)
}

// put returns f's buffers to the pool.
func (r *Registry) put(f *Field) {
	if f.Dist != nil {
		r.distPool = append(r.distPool, f.Dist)
		r.dirPool = append(r.dirPool, f.Dir)
	}
	*f = Field{}
}
