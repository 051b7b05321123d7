package director

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/leyworks/ley/director/registry"
	"github.com/leyworks/ley/director/spawner"
	"github.com/leyworks/ley/store"
)

// newSpawner is the spawner of this director's hosts, with every knob of
// Config.Spawn passed on as the hosts' flags.
func (d *Director) newSpawner() *spawner.Spawner {
	cfg := d.cfg.Spawn
	args := []string{
		"--pool-size", strconv.Itoa(cfg.Pool()),
		"--tick-rate", strconv.Itoa(cfg.TickRate),
		"--interest-radius", strconv.Itoa(cfg.InterestRadius),
		"--cell-size", strconv.Itoa(cfg.CellSize),
		"--snapshot-every", strconv.Itoa(cfg.SnapshotEvery),
		"--persist-every", cfg.PersistEvery.String(),
		"--resume-grace", cfg.ResumeGrace.String(),
		"--transfer-timeout", cfg.TransferTimeout.String(),
		"--park-after", cfg.ParkAfter.String(),
		"--log-level", cfg.LogLevel,
		"--orphan-timeout", cfg.OrphanTimeout.String(),
		"--shutdown-grace", cfg.ShutdownGrace.String(),
		"--huge-pages=" + strconv.FormatBool(cfg.HugePages),
	}
	if cfg.MaxConnsPerAddr > 0 {
		args = append(args, "--max-conns-per-addr", strconv.Itoa(cfg.MaxConnsPerAddr))
	}
	if cfg.MaxHandshakesPerAddr > 0 {
		args = append(args, "--max-handshakes-per-addr", strconv.Itoa(cfg.MaxHandshakesPerAddr))
	}
	if cfg.Writev {
		args = append(args, "--writev")
	}
	if cfg.Content != "" { // the director's own content folder: the hosts build Areas from the same
		args = append(args, "--content", cfg.Content)
	}
	if origins := d.webOrigins(); len(origins) > 0 { // the pages that may open players' connections
		args = append(args, "--allowed-origins", strings.Join(origins, ","))
	}
	return spawner.New(spawner.Config{
		Binary: cfg.Binary, Director: d.controlAddr, MinHosts: cfg.MinHosts, MaxHosts: cfg.MaxHosts, Args: args,
		Listen: cfg.Listen, MemLimit: cfg.MemLimit, NoFile: cfg.NoFile, OOMScoreAdj: cfg.OOMScoreAdj, Logger: d.log,
	}, spawner.Hooks{Started: d.registry.ChildStarted, Exited: d.registry.ChildExited})
}

// leadingForHosts is the registry's Leading: while this director follows,
// a host's registration is told where the leader is. A registration that
// arrives while the director neither leads nor knows who does waits a
// little for one or the other (settle).
func (d *Director) leadingForHosts() (bool, string, string) {
	d.settle(context.Background(), min(settleWait, d.cfg.ControlRegisterTimeout/2))
	if d.leading.Load() {
		return true, "", ""
	}
	refusal, leader := d.notLeader()
	return false, refusal, leader
}

// plan is the registry's Plan: the size an Area runs at, its portals, and
// how many creatures (or wanderers) its snapshots may hold.
func (d *Director) plan(ctx context.Context, a store.Area) registry.Plan {
	w, h := d.areaSize(a)
	p := registry.Plan{W: w, H: h, Portals: d.spawnPortals(ctx, a), Stale: w != a.W || h != a.H}
	if p.Stale {
		// An Area stored before templates: its map is another size now,
		// and what its blob kept (wanderers on an open floor) has no place
		// on it. It starts from its map.
		d.warned.once(d.log, "stale-blob:"+strconv.Itoa(int(a.ID)), "an area's stored state predates its map; it starts from the map",
			"area", a.ID, "template", a.Template, "stored", strconv.Itoa(a.W)+"x"+strconv.Itoa(a.H), "map", strconv.Itoa(w)+"x"+strconv.Itoa(h))
	}
	switch a.Template {
	case EmptyTemplate:
		p.Bounded = true // players only
	default:
		if t, err := d.cfg.Content.Template(a.Template); err == nil {
			for _, sp := range t.Map.Spawners {
				p.NPCs += sp.Count
			}
			p.Bounded = true
		}
	}
	return p
}

// watchStore keeps the registry told whether the store is available, by
// a cheap read every second while it was found unavailable (the
// registry's own writes say so first).
func (d *Director) watchStore(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !d.registry.StoreInDoubt() {
			continue
		}
		if _, err := d.store.RealmSettings(ctx); err == nil {
			d.registry.SetStoreInDoubt(false)
			d.log.Info("the store is available again")
		}
	}
}
