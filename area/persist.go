package area

import (
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"time"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/net/wire"
)

func (ha *hostArea) scheduleChores(t time.Time) {
	if ha.nextChores.IsZero() || t.Before(ha.nextChores) {
		ha.nextChores = t
	}
	ha.a.SetTimer(ha.nextChores)
}

// blobSeed seeds blobSum.
var blobSeed = maphash.MakeSeed()

// blobSum is the hash an Area keeps of the last blob it persisted, to
// tell whether its state changed since (it parks only that state:
// park.go).
func blobSum(blob []byte) uint64 { return maphash.Bytes(blobSeed, blob) }

// persist sends a snapshot of the Area and its characters to the director
// and keeps it until acked (a newer one replaces an older unacked one: the
// director's write is idempotent and monotonic on seq).
func (ha *hostArea) persist(now time.Time, final bool) {
	ha.lastPersist = now
	if ha.fenced {
		return
	}
	blob, err := ha.eng.Save()
	if err != nil {
		ha.h.log.Error("persist area", "area", ha.id, "err", err)
		return
	}
	chars, err := ha.characters()
	if err != nil {
		ha.h.log.Error("persist character", "area", ha.id, "err", err)
		return // nothing half: the whole snapshot waits for the next try
	}
	ha.seq++
	ha.persistedSum = blobSum(blob)
	ha.unacked = &control.Snapshot{Area: ha.id, Epoch: ha.epoch, Seq: ha.seq, Blob: blob, Characters: chars, Final: final}
	ha.sentAt = now
	ha.h.link.send(ha.unacked)
	ha.presence(now)
}

// resend sends the unacked snapshot again (timer or reconnect), and the
// presence, which the director rebuilds from what hosts report.
func (ha *hostArea) resend(now time.Time) {
	ha.presence(now)
	for _, c := range ha.crossings {
		c.sentAt = now
		ha.h.link.send(c.out)
	}
	for _, c := range ha.settling {
		c.sentAt = now
		ha.h.link.send(c.out)
	}
	if ha.unacked == nil {
		return
	}
	ha.sentAt = now
	ha.h.link.send(ha.unacked)
}

// characters returns the states a snapshot taken now writes: every body's
// (a player mid-crossing on its from-square: if this incarnation dies
// before the crossing settles, the player comes back beside the portal,
// not on it), and every departed character's not yet acked.
func (ha *hostArea) characters() ([]control.Character, error) {
	chars := make([]control.Character, 0, len(ha.bodies)+len(ha.departed))
	for _, b := range ha.order {
		p := ha.positions.Get(b.entity)
		if p == nil {
			continue
		}
		x, y := p.X, p.Y
		for _, c := range ha.crossings {
			if c.b == b {
				x, y = ha.a.Grid.XY(c.from)
			}
		}
		state, err := ha.eng.Items.SaveCharacter(b.entity)
		if err != nil {
			return nil, fmt.Errorf("account %d: %w", b.account, err)
		}
		chars = append(chars, control.Character{Account: b.account, X: x, Y: y, State: state, Placed: true})
	}
	if len(ha.departed) == 0 {
		return chars, nil // the usual case: no key list to sort
	}
	for _, acct := range slices.Sorted(maps.Keys(ha.departed)) {
		if ha.bodies[acct] == nil {
			chars = append(chars, ha.departed[acct].char)
		}
	}
	return chars, nil
}

// depart records the final state of body b, which leaves now other than
// through a portal, right after the snapshot that holds it (persist):
// see hostArea.departed.
func (ha *hostArea) depart(b *body) {
	if !departures() || ha.unacked == nil || ha.unacked.Seq != ha.seq {
		return // no snapshot was made (fenced, or a state failed to save): nothing can be written
	}
	for _, c := range ha.unacked.Characters {
		if c.Account == b.account {
			ha.departed[b.account] = departure{char: c, since: ha.seq}
			return
		}
	}
}

// presence reports the Area's connected peers and the accounts whose
// bodies are here: bound, and away (dropped within the grace, or crossing
// without a connection).
func (ha *hostArea) presence(now time.Time) {
	ha.lastPresence = now
	accounts := make([]uint64, 0, ha.bound)
	var away []uint64
	for _, b := range ha.order {
		if b.peer != nil {
			accounts = append(accounts, b.account)
		} else {
			away = append(away, b.account)
		}
	}
	all := make([]uint64, 0, len(accounts)+len(away))
	all = append(append(all, accounts...), away...)
	ha.bodiesSeen.Store(&all)
	ha.h.link.send(&control.Presence{Area: ha.id, Peers: ha.bound, Accounts: accounts, Away: away})
	ha.tellPresence()
}

// tellPresence sends every bound peer the players bound in the Area with
// their names, when that list changed since it was last sent (and to a
// peer bound since, which has not had it).
func (ha *hostArea) tellPresence() {
	list := &wire.Presence{Area: ha.id, Players: make([]wire.Player, 0, len(ha.order))}
	for _, b := range ha.order { // bound and away alike: an away body has a name too
		list.Players = append(list.Players, wire.Player{Entity: b.entity.ID(), Name: b.name})
	}
	msg, err := wire.Encode(list)
	if err != nil {
		ha.h.log.Error("encode presence", "area", ha.id, "err", err)
		return
	}
	changed := string(msg) != ha.lastPresenceMsg
	ha.lastPresenceMsg = string(msg)
	for _, b := range ha.order {
		if p := b.peer; p != nil && (changed || !p.hasPresence) {
			p.hasPresence = true
			p.sent(len(msg))
			_ = p.conn.Send(msg)
		}
	}
	ha.tellSpectators(msg, changed)
}

// finalSnapshot is the last snapshot of b's session, sent reliably just
// before its connection ends: no records, the final ack_seq.
func (ha *hostArea) finalSnapshot(b *body) *wire.Snapshot {
	s := &wire.Snapshot{Tick: ha.a.Tick, Records: []byte{}}
	if pl := ha.players.Get(b.entity); pl != nil {
		s.AckSeq = pl.AckSeq
	}
	return s
}

// crossingOf returns b's crossing under way or settling, or nil.
func (ha *hostArea) crossingOf(b *body) *crossing {
	for _, c := range ha.crossings {
		if c.b == b {
			return c
		}
	}
	for _, c := range ha.settling {
		if c.b == b {
			return c
		}
	}
	return nil
}
