package registry

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/leyworks/ley/net/control"
	"github.com/leyworks/ley/store"
)

// ErrSpectatorsFull: the Area, or its host, has its maximum of
// spectators (area.MaxSpectatorsPerArea, area.MaxSpectatorsPerHost).
var ErrSpectatorsFull = errors.New("registry: the area has its maximum of spectators")

// Spectate registers a spectator grant for admin in l on its host and
// waits for its ack: the hello that uses it watches the Area read-only,
// with no body (docs/protocol.md, "Spectators"). Unlike a join grant it
// does not wake a frozen Area, does not count as anyone coming, and
// names no character. A host at its bounds refuses it: ErrSpectatorsFull;
// any other failure is ErrGrantFailed.
func (r *Registry) Spectate(ctx context.Context, l *Live, admin store.AccountID) (Answer, error) {
	token := hex.EncodeToString(randomBytes(16))
	joinID := joinSeq.Add(1)
	h := l.Host
	call, err := h.grants.Expect(token)
	if err != nil {
		return Answer{}, fmt.Errorf("%w: %w", ErrGrantFailed, err)
	}
	msg := &control.Spectate{Area: uint32(l.ID), Token: token, JoinID: joinID, TTLMS: r.cfg.GrantTTL.Milliseconds(), Account: uint64(admin)}
	if err := h.conn.Send(msg); err != nil {
		call.Cancel()
		return Answer{}, fmt.Errorf("%w: the area's host is unreachable: %w", ErrGrantFailed, err)
	}
	wctx, cancel := context.WithTimeout(ctx, r.cfg.JoinTimeout)
	ack, err := call.Wait(wctx)
	cancel()
	switch {
	case err != nil:
		call.Cancel()
		return Answer{}, fmt.Errorf("%w: the area's host did not register the spectator grant: %w", ErrGrantFailed, err)
	case ack.Error == control.ErrorSpectatorsFull:
		return Answer{}, fmt.Errorf("%w: host %d: %s", ErrSpectatorsFull, h.ID, ack.Error)
	case ack.Error != "":
		return Answer{}, fmt.Errorf("%w: host %d refused the spectator grant: %s", ErrGrantFailed, h.ID, ack.Error)
	}
	return Answer{Grant: token, WSURL: h.WSURL, JoinID: joinID, Area: uint32(l.ID)}, nil
}
