package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/cases"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/width"
)

// Errors a Store answers with, wrapped with context; test with errors.Is.
var (
	// ErrNotFound reports that the record asked for (or one it refers to,
	// such as an Area or Account) does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrDuplicate reports that a unique key is already taken: an email, a
	// second identity for an account, a membership, an invite code.
	ErrDuplicate = errors.New("store: duplicate")
	// ErrNameTaken reports a display name another account has (the two
	// names have one NameKey).
	ErrNameTaken = errors.New("store: name taken")
	// ErrConflict reports a transfer id reused for a different crossing
	// (another account or other areas).
	ErrConflict = errors.New("store: conflict")
	// ErrFenced reports a snapshot written with an epoch that is not the
	// Area's current incarnation: the writer is stale and must stop.
	ErrFenced = errors.New("store: fenced (stale epoch)")
	// ErrNotMember reports an account that is not a member of the Area.
	ErrNotMember = errors.New("store: not a member")
	// ErrExpired reports a session or invite past its expiry.
	ErrExpired = errors.New("store: expired")
	// ErrRevoked reports a revoked session.
	ErrRevoked = errors.New("store: revoked")
	// ErrUsedUp reports an invite code with no uses left.
	ErrUsedUp = errors.New("store: invite used up")
	// ErrInvalid reports an argument the store refuses before touching the
	// database (an empty email, a non-positive size, a missing id).
	ErrInvalid = errors.New("store: invalid argument")
	// ErrDeposed reports a write refused because the Store's leadership
	// term is over (see Store.Lead): another director leads the realm now,
	// and this one must stop writing.
	ErrDeposed = errors.New("store: deposed (a newer leadership term)")
	// ErrUnavailable reports that the database could not be reached, or
	// refused the work for now: a connection refused, reset or closed; a
	// server shutting down, restarting, recovering from a crash, or out
	// of connections, memory or disk; for SQLite, a file still locked by
	// another connection after the busy timeout, full, failing to read or
	// write, unopenable or read-only. Nothing is wrong with the request:
	// retry it later, and tell a user the database is unavailable. A
	// write that failed with it may have been applied all the same (its
	// connection can fail after the commit was sent): the writes that
	// matter are idempotent (WriteSnapshot on Seq, BeginTransfer and
	// MoveCharacter on the transfer id), so a retry answers what was
	// done. It never wraps a refusal on the data's merits (ErrDuplicate,
	// ErrNotFound, ErrInvalid, ...) or a fence (ErrFenced, ErrDeposed); a
	// call whose own context ended returns the context's error instead.
	ErrUnavailable = errors.New("store: database unavailable")
)

// AccountID identifies an Account; assigned by the store, never 0.
type AccountID uint64

// AreaID identifies an Area; assigned by the store, never 0.
type AreaID uint32

// TransferID identifies one portal crossing; chosen by the Area that starts
// it (a random, unique string) and the key of the crossing's idempotency.
type TransferID string

// Epoch numbers an Area's incarnations; BeginIncarnation increments it.
type Epoch uint64

// Seq numbers an Area's snapshots, monotonic per Area.
type Seq uint64

// Term numbers a realm's director leaderships: each Store.Lead that
// succeeds starts a term higher than every earlier one. 0 is no term.
type Term uint64

// Leader is the director leading a realm, as it recorded itself when its
// term began. The record outlives the director: a leader that died stays
// named until the next one leads.
type Leader struct {
	Term Term
	// HTTP is the base URL of the leader's API (http://host:port) that
	// other directors forward requests to; Control the control address
	// (host:port) area hosts are sent to.
	HTTP    string
	Control string
	Since   time.Time
}

// Leadership is a Store's hold on its realm's leadership, from Store.Lead.
// Safe for concurrent use.
//
// A leadership ends only when a newer term begins (Lost): losing touch
// with the database does not end it. While the Store cannot confirm its
// hold (store/pg: the connection holding its lock failed, and it is
// reconnecting to take the lock back) the leadership is in doubt
// (InDoubt): no newer term is known, and every write goes on being fenced
// by the term in its own transaction, so it either commits in this term
// or fails (with ErrUnavailable while the database cannot be reached,
// ErrDeposed once another Store led). The doubt ends when the hold is
// confirmed in the same term, or with the loss of the leadership.
type Leadership struct {
	term Term
	lost chan struct{}
	once sync.Once
	err  error // set before lost is closed

	mu    sync.Mutex // guards doubt
	doubt error      // why the hold is in doubt; nil while it is sure
}

// NewLeadership returns a held Leadership of term, for Store backends.
func NewLeadership(term Term) *Leadership {
	return &Leadership{term: term, lost: make(chan struct{})}
}

// Term is the term held.
func (l *Leadership) Term() Term { return l.term }

// Lost is closed when the leadership is lost: a newer term began (the
// Store's check of its hold, or one of its writes, found it). A failed
// connection is not a lost leadership (see InDoubt). Every later write of
// the Store fails with ErrDeposed.
func (l *Leadership) Lost() <-chan struct{} { return l.lost }

// Err says why the leadership was lost (wrapping ErrDeposed); nil while
// it is held, in doubt or not.
func (l *Leadership) Err() error {
	select {
	case <-l.lost:
		return l.err
	default:
		return nil
	}
}

// Lose marks the leadership lost because of cause (the first call wins;
// later ones do nothing), for Store backends. A backend calls it only on
// finding a newer term.
func (l *Leadership) Lose(cause error) {
	l.once.Do(func() {
		l.err = fmt.Errorf("%w: term %d: %w", ErrDeposed, l.term, cause)
		close(l.lost)
	})
}

// InDoubt reports whether the Store is re-establishing its hold on the
// leadership (see Leadership): a director may report it, and go on
// leading. It is false once the leadership is lost.
func (l *Leadership) InDoubt() bool { return l.Doubt() != nil }

// Doubt says why the hold is in doubt (wrapping ErrUnavailable): nil
// while it is sure, and once the leadership is lost.
func (l *Leadership) Doubt() error {
	select {
	case <-l.lost:
		return nil
	default:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.doubt
}

// SetDoubt marks the hold in doubt because of cause, which should wrap
// ErrUnavailable, or sure again with a nil cause, for Store backends.
func (l *Leadership) SetDoubt(cause error) {
	l.mu.Lock()
	l.doubt = cause
	l.mu.Unlock()
}

// TokenHash is the SHA-256 of a session token: the store never sees tokens.
type TokenHash [sha256.Size]byte

// HashToken returns the hash a session token is stored and looked up by.
func HashToken(token string) TokenHash { return sha256.Sum256([]byte(token)) }

// CanonicalEmail returns the one form an email address is stored, compared
// and kept unique in: trimmed of white space, full-width and half-width
// forms mapped to their plain forms (so '＠' is '@'), then its local part
// and its domain (split at the last '@') each put through the PRECIS
// UsernameCaseMapped profile (RFC 8265): lower-cased, NFC-normalised, and
// checked. So "ａlice@T.local" and "alice@t.local" are one address. It returns an
// error wrapping ErrInvalid when there is no '@' or a part has a rune the
// profile disallows (a space, a control character, an unpaired bidi
// direction, ...). It does not check that the address is well formed; the
// director parses addresses before they reach a Store.
func CanonicalEmail(email string) (string, error) {
	email = width.Fold.String(strings.TrimSpace(email))
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return "", fmt.Errorf("email %q: no '@': %w", email, ErrInvalid)
	}
	local, err := precis.UsernameCaseMapped.String(email[:at])
	if err != nil {
		return "", fmt.Errorf("email %q: local part: %w: %w", email, ErrInvalid, err)
	}
	domain, err := precis.UsernameCaseMapped.String(email[at+1:])
	if err != nil {
		return "", fmt.Errorf("email %q: domain: %w: %w", email, ErrInvalid, err)
	}
	return local + "@" + domain, nil
}

// NormalizeEmail returns the form emails are stored and compared in: the
// CanonicalEmail form, or, for a string CanonicalEmail refuses, the string
// trimmed and lower-cased (the form before migration 2, so an account
// stored in it is still found). Every Store method taking an email applies
// it.
func NormalizeEmail(email string) string {
	if c, err := CanonicalEmail(email); err == nil {
		return c
	}
	return strings.ToLower(strings.TrimSpace(email))
}

// Account is a player's (or an admin's) account.
type Account struct {
	ID      AccountID
	Email   string // normalised, unique
	Name    string // display name
	Admin   bool
	Created time.Time
	// Role is the account's role in the Area MemberArea read it with;
	// empty where an account is read otherwise.
	Role Role
}

// ProviderPassword is the Identity provider of email + password accounts;
// its Subject is the account's email.
const ProviderPassword = "password"

// Identity is how an account authenticates; an account has exactly one.
type Identity struct {
	Account     AccountID
	Provider    string // ProviderPassword, or an external provider's name
	Subject     string // the provider's id for the account
	PasswordPHC string // a PHC string (argon2id); empty for external providers
}

// NewAccount is what CreateAccount needs.
type NewAccount struct {
	Email       string
	Name        string
	PasswordPHC string
	Admin       bool
	Created     time.Time
}

// Session is a login session, stored by its token's hash.
type Session struct {
	Hash        TokenHash
	Account     AccountID
	Created     time.Time
	LastSeen    time.Time
	Idle        time.Duration // the idle timeout: valid until LastSeen+Idle
	IdleExpires time.Time     // LastSeen + Idle
	Expires     time.Time     // absolute expiry, never extended
	Revoked     bool
}

// Role is an account's role in an Area.
type Role string

// The roles.
const (
	RoleOwner  Role = "owner"
	RoleMember Role = "member"
	// RoleBuilder is a member its Area's owner let build there.
	RoleBuilder Role = "builder"
)

// Area is an Area's durable record, without its state blob (see
// Store.AreaSnapshot).
type Area struct {
	ID    AreaID
	Owner AccountID
	Kind  string // "home", "village", "arena", ...
	// Template names the content the Area is made from (its map and
	// creatures; see package content), or "empty", an open floor of W x H.
	// Areas stored before templates existed have their kind's name, the
	// kind's default template.
	Template string
	Name     string
	W, H     int
	Seed     uint64
	Rules    []byte // opaque rules blob
	Seq      Seq    // the stored snapshot's seq; 0 before the first
	Epoch    Epoch  // the current incarnation; 0 before the first
	// Placement is the hash of the placement credential of the current
	// incarnation (see BeginIncarnation): zero before the first.
	Placement  TokenHash
	LastPlayed time.Time
	Created    time.Time
}

// NewArea is what CreateArea needs.
type NewArea struct {
	Owner AccountID
	Kind  string
	// Template names the Area's template; "" stores Kind, the kind's
	// default template. The store checks only its length (MaxTemplate):
	// the director checks the name against its content.
	Template string
	Name     string
	W, H     int
	Seed     uint64
	Rules    []byte
	Created  time.Time
}

// Member is one account's membership of an Area.
type Member struct {
	Account AccountID
	Name    string // the account's display name
	Role    Role
	Added   time.Time
}

// Invite is an invite code to an Area.
type Invite struct {
	Code      string
	Area      AreaID
	CreatedBy AccountID
	UsesLeft  int
	Expires   time.Time
	Created   time.Time
}

// Character is a player's persistent state: in exactly one Area at a time.
type Character struct {
	Account AccountID
	Area    AreaID // the Area the player is in
	Home    AreaID
	X, Y    int32
	State   []byte
	// Placed is false until an Area has stored a position for the
	// character in Area (a new character, or one moved without a cell).
	Placed  bool
	Version uint64 // incremented on every write
	Updated time.Time
}

// Holding is a stored blob or character state that may hold items:
// an Area's (Area set, with its size) or a character's (Account set).
type Holding struct {
	Area    AreaID
	W, H    int
	Account AccountID
	State   []byte
	// In is, for a character, the Area its row names: the one whose
	// snapshots write its state.
	In AreaID
}

// CharacterState is one player's state inside a snapshot.
type CharacterState struct {
	Account AccountID
	X, Y    int32
	State   []byte
}

// Snapshot is what an Area's incarnation persists.
type Snapshot struct {
	Area       AreaID
	Epoch      Epoch
	Seq        Seq
	Blob       []byte
	Characters []CharacterState
	At         time.Time // becomes the Area's LastPlayed
}

// SnapshotResult reports what WriteSnapshot did.
type SnapshotResult struct {
	// Applied is false when Seq was not newer than the stored one: the
	// write was an idempotent no-op.
	Applied bool
	// Characters counts the character rows written; a character whose row
	// names another Area is skipped (fenced).
	Characters int
}

// SnapshotWrite is one snapshot's outcome in WriteSnapshots.
type SnapshotWrite struct {
	Result SnapshotResult
	// Err is nil, or ErrFenced, ErrInvalid or ErrNotFound (wrapped) when
	// this snapshot was refused: it changed nothing.
	Err error
}

// TransferStatus is a transfer's state.
type TransferStatus string

// The transfer statuses.
const (
	TransferPending  TransferStatus = "pending"
	TransferDone     TransferStatus = "done"
	TransferRejected TransferStatus = "rejected"
)

// TransferResult is a finished transfer's outcome.
type TransferResult string

// The transfer results. The director may record other rejection reasons
// with RejectTransfer.
const (
	ResultNone        TransferResult = ""              // still pending
	ResultMoved       TransferResult = "moved"         // done: the character is in To
	ResultNotInSource TransferResult = "not_in_source" // rejected: the character was not in From
	ResultTimeout     TransferResult = "timeout"       // rejected: the pending transfer expired
	ResultStaleSource TransferResult = "stale_source"  // rejected: From's incarnation changed (FromEpoch)
	ResultUnsaved     TransferResult = "unsaved"       // rejected: From's snapshot holding the character's state is not stored (FromSeq)
)

// Transfer is one portal crossing: the character of Account from From to
// To at cell (X, Y) with State.
type Transfer struct {
	ID      TransferID
	Account AccountID
	From    AreaID
	To      AreaID
	X, Y    int32
	State   []byte
	Status  TransferStatus
	Result  TransferResult
	Created time.Time
	Expires time.Time // when a pending transfer times out
	// FromEpoch, when set on a MoveCharacter call, fences the move: it
	// happens only while From's current incarnation is FromEpoch, so a
	// crossing asked for by an incarnation that has since died and been
	// replaced can never move a player who came back into its successor.
	// It is not stored.
	FromEpoch Epoch
	// FenceFrom, on a MoveCharacter call, ends From's incarnation FromEpoch
	// with the move: From's epoch goes up by one in the same transaction
	// (and the move happens only while it is FromEpoch), so an incarnation
	// of From that still runs out of the director's sight (on a host cut
	// off and not yet gone) can never store a snapshot again. What such an
	// incarnation changed since its last stored snapshot, the moved
	// character's doings there included, is dropped with it: the character
	// leaves with the state that snapshot holds, and nothing it placed or
	// took since can reappear in From's blob. A move by the door from an
	// Area no host runs for the director sets it. It is not stored.
	FenceFrom bool
	// FromSeq, when set on a MoveCharacter call, fences the move too: it
	// happens only once From's stored snapshot is FromSeq or newer, the
	// snapshot that holds the character's final state in From (what it
	// carries, written with From's blob in one transaction). A move never
	// writes a character's state: its inventory changes only with the
	// snapshots of the Area it is in. It is not stored.
	FromSeq Seq
	// Placed says whether (X, Y) is a square the character stands on in To
	// (a portal's landing), or only where the Area puts newcomers (a
	// move by the door): the character row's Placed. It is not stored.
	Placed bool
}

// HostRecord is an area host a director spawned: it outlives the
// director, and the next one adopts it when it registers with its
// credential (whose hash keys the record; the credential itself is never
// stored).
type HostRecord struct {
	Credential TokenHash
	Name       string
	PID        int
	// Machine identifies the machine it runs on (its boot id): a director
	// on the same machine can tell whether the process still lives.
	Machine string
	WSURL   string
	Started time.Time
	Seen    time.Time
}

// RealmSettings is the realm door's configuration: a single row.
type RealmSettings struct {
	Open              bool   // accepting joins
	Cap               int    // player cap
	NewPlayersWelcome bool   // accepting sign-ups
	Message           string // shown to players at the door
}

// DefaultRealmSettings returns the settings a new realm starts with.
func DefaultRealmSettings() RealmSettings {
	return RealmSettings{Open: true, Cap: 40, NewPlayersWelcome: true}
}

// Change is one entry of the audit log: a change an admin made to the
// realm, recorded in the same transaction as the change itself.
type Change struct {
	ID     int64     // set by the store, growing
	At     time.Time // when it was made
	Actor  AccountID // the admin who made it
	Action string    // what kind of change, e.g. "realm.update" (1..MaxChangeAction bytes)
	Target string    // what it changed, e.g. "realm" or "account 42" (..MaxChangeTarget bytes)
	Detail string    // what it was and became, in words (..MaxChangeDetail bytes)
}

// Bounds of a Change's words, in bytes; longer ones are ErrInvalid.
const (
	MaxChangeAction = 64
	MaxChangeTarget = 128
	MaxChangeDetail = 2048
)

// Sample is one of the director's periodic samples for the capacity charts.
type Sample struct {
	At           time.Time
	Players      int
	LiveAreas    int
	FrozenAreas  int
	Hosts        int
	RSSBytes     int64
	CPU          float64 // cores busy (1.0 = one core)
	WorstTickP99 time.Duration
}

// Store is the director's persistence. A Store is safe for concurrent use;
// every method is one round trip or one transaction unless it says
// otherwise, and every method that changes more than one row does so
// atomically. Returned slices and structs are the caller's.
//
// A database that goes away does not break a Store: while it cannot be
// reached (or refuses work for now) every method fails with an error
// wrapping ErrUnavailable, and works again once the database is back,
// with no reopening; a leadership survives it (see Lead).
type Store interface {
	// Migrate applies the pending schema migrations (Open already did);
	// `ley migrate` calls it. Safe to run concurrently and repeatedly.
	Migrate(ctx context.Context) error
	// Close releases the store's connections (and its leadership).
	Close() error

	// Lead blocks until this Store holds the realm's leadership, or ctx is
	// done; then it begins a new term, records me (its Term and Since
	// ignored) as the realm's Leader, and carries the term into every
	// later write: each write checks, in its own transaction, that the
	// term is still the realm's newest, and fails with ErrDeposed once
	// another Store has led since. So a director that lost its leadership
	// (partitioned, paused, or presumed dead) can never write over its
	// successor's work. A Store that never led writes unfenced (tools,
	// migrations, tests). Postgres holds the leadership with an advisory
	// lock on a connection of its own, released when that connection
	// ends (the leader's process died, or Close); SQLite serves one
	// director, which leads at once in a constant term 1. Lead may be
	// called once per Store.
	//
	// Only a newer term ends a leadership. When the database goes away
	// (a restart, a network cut) the Leadership is in doubt and the
	// Store works to confirm it (see Leadership); a Store waiting in
	// Lead goes on waiting through the outage. A Store whose hold
	// failed takes its lock back, after a restart, before a Store that
	// was waiting for it does (store/pg's doc says how), so a database
	// restart does not move the leadership to another director.
	Lead(ctx context.Context, me Leader) (*Leadership, error)
	// Leader returns the realm's leader as last recorded by Lead (it may
	// have died since), or ErrNotFound before any Store led.
	Leader(ctx context.Context) (Leader, error)

	// CreateAccount creates an account and its password identity in one
	// transaction. A taken email is ErrDuplicate; a name another account
	// has (by NameKey) is ErrNameTaken.
	CreateAccount(ctx context.Context, a NewAccount) (Account, error)
	// Account returns the account id, or ErrNotFound.
	Account(ctx context.Context, id AccountID) (Account, error)
	// AccountByEmail returns the account with the (normalised) email and
	// its identity, or ErrNotFound.
	AccountByEmail(ctx context.Context, email string) (Account, Identity, error)
	// Identity returns the account's identity, or ErrNotFound.
	Identity(ctx context.Context, account AccountID) (Identity, error)
	// AddIdentity records an identity for an account created without one;
	// an account that has one gets ErrDuplicate.
	AddIdentity(ctx context.Context, id Identity) error
	// UpdatePassword replaces the account's password PHC string (a rehash
	// on login, or a password change).
	UpdatePassword(ctx context.Context, account AccountID, phc string) error
	// SetAdmin grants or withdraws the admin flag.
	SetAdmin(ctx context.Context, account AccountID, admin bool) error

	// CreateSession stores a session valid until now+idle (pushed forward
	// by TouchSession) and never past now+absolute.
	CreateSession(ctx context.Context, hash TokenHash, account AccountID, now time.Time, idle, absolute time.Duration) (Session, error)
	// SessionByTokenHash returns the session valid at now: ErrNotFound
	// for an unknown hash, ErrRevoked for a revoked one, ErrExpired past
	// either expiry (the Session is returned with these two).
	SessionByTokenHash(ctx context.Context, hash TokenHash, now time.Time) (Session, error)
	// TouchSession marks the session seen at now, extending its idle
	// expiry; it fails like SessionByTokenHash for an invalid session.
	TouchSession(ctx context.Context, hash TokenHash, now time.Time) (Session, error)
	// RevokeSession revokes one session (ErrNotFound if unknown).
	RevokeSession(ctx context.Context, hash TokenHash) error
	// RevokeAccountSessions revokes every session of the account and
	// reports how many it revoked.
	RevokeAccountSessions(ctx context.Context, account AccountID) (int, error)
	// PruneSessions deletes sessions revoked or expired before now.
	PruneSessions(ctx context.Context, now time.Time) (int, error)

	// FindAccounts returns the accounts whose email or display name holds
	// q (case folded; "" matches every account), newest first, at most
	// limit (1..1000).
	FindAccounts(ctx context.Context, q string, limit int) ([]Account, error)
	// EndAccountSessions revokes every session of the account, as an
	// admin's act recorded with ch in the audit log in one transaction,
	// and reports how many it revoked; an unknown account is ErrNotFound.
	EndAccountSessions(ctx context.Context, account AccountID, ch Change) (int, error)

	// CreateArea creates an Area (epoch 0, seq 0, empty state) and makes
	// its owner a member with RoleOwner, in one transaction.
	CreateArea(ctx context.Context, a NewArea) (Area, error)
	// Area returns the Area's record without its state blob.
	Area(ctx context.Context, id AreaID) (Area, error)
	// AreasOf returns the Areas the account is a member of, by id.
	AreasOf(ctx context.Context, account AccountID) ([]Area, error)
	// FirstAreaOf returns the oldest Area (the lowest id) made from
	// template, or ErrNotFound when there is none. The director resolves
	// a map portal's target template to it.
	FirstAreaOf(ctx context.Context, template string) (Area, error)
	// SetAreaRules replaces an Area's opaque rules blob (its portals and
	// rule overrides); an unknown area is ErrNotFound.
	SetAreaRules(ctx context.Context, area AreaID, rules []byte) error
	// AddMember makes account a member of area; an existing membership is
	// ErrDuplicate, an unknown area or account ErrNotFound.
	AddMember(ctx context.Context, area AreaID, account AccountID, role Role, now time.Time) error
	// IsMember reports whether account is a member of area.
	IsMember(ctx context.Context, area AreaID, account AccountID) (bool, error)
	// MemberArea returns area's record and account's, in one round trip,
	// when account is a member of area; ErrNotMember otherwise (a missing
	// Area or account alike).
	MemberArea(ctx context.Context, area AreaID, account AccountID) (Area, Account, error)
	// MemberRole returns the account's role in area, or ErrNotMember.
	MemberRole(ctx context.Context, area AreaID, account AccountID) (Role, error)
	// SetMemberRole makes a member of area a builder or a plain member
	// again (RoleBuilder, RoleMember); ErrNotMember for an account that is
	// none, ErrInvalid for another role or the owner's.
	SetMemberRole(ctx context.Context, area AreaID, account AccountID, role Role) error
	// Members returns the Area's members by account id.
	Members(ctx context.Context, area AreaID) ([]Member, error)
	// GiveMembership makes account a member of area with role
	// (RoleMember or RoleBuilder), or changes its role, as an admin's act
	// recorded with ch in one transaction; ErrInvalid for another role or
	// the owner's membership, ErrNotFound for an unknown area or account.
	GiveMembership(ctx context.Context, area AreaID, account AccountID, role Role, ch Change) error
	// TakeMembership ends account's membership of area, as an admin's act
	// recorded with ch in one transaction; ErrNotMember for an account
	// that is none, ErrInvalid for the owner.
	TakeMembership(ctx context.Context, area AreaID, account AccountID, ch Change) error

	// CreateInvite stores an invite; a taken code is ErrDuplicate.
	CreateInvite(ctx context.Context, inv Invite) error
	// RedeemInvite makes account a member of the invite's Area and uses
	// one of the invite's uses, in one transaction. ErrNotFound for an
	// unknown code, ErrExpired past its expiry, ErrUsedUp with no uses
	// left. An account already a member gets the Area without using a use.
	RedeemInvite(ctx context.Context, code string, account AccountID, now time.Time) (AreaID, error)
	// InvitesBy returns the invites account made that can still be
	// redeemed at now (not expired, a use left), newest first (then by
	// code), at most limit of them; a limit below 1 is ErrInvalid.
	InvitesBy(ctx context.Context, account AccountID, now time.Time, limit int) ([]Invite, error)

	// BeginIncarnation increments the Area's epoch atomically, records
	// placement (the hash of the credential of the host it is placed on)
	// for the new incarnation, and returns the new epoch; the director
	// calls it each time it makes the Area live.
	BeginIncarnation(ctx context.Context, area AreaID, placement TokenHash) (Epoch, error)
	// WriteSnapshot stores a snapshot in one transaction. An epoch other
	// than the Area's current one is ErrFenced and changes nothing; a Seq
	// past math.MaxInt64 (what the databases' signed columns hold) is
	// ErrInvalid; a Seq not newer than the stored one changes nothing and
	// reports Applied=false; otherwise it stores blob and seq, sets
	// LastPlayed, and writes each character whose row still names this
	// Area.
	WriteSnapshot(ctx context.Context, s Snapshot) (SnapshotResult, error)
	// WriteSnapshots stores snaps in one transaction, one commit for all
	// (a group commit), each behind WriteSnapshot's fences as if written
	// alone: a snapshot refused on its own (ErrFenced, ErrInvalid, or
	// ErrNotFound for an Area with no row) changes nothing and leaves the
	// others' writes be. It returns one
	// SnapshotWrite a snapshot, in snaps' order; an error means the
	// transaction failed and none of them was written.
	WriteSnapshots(ctx context.Context, snaps []Snapshot) ([]SnapshotWrite, error)
	// AreaSnapshot returns the Area's stored state blob, seq and epoch.
	// It copies the whole blob.
	AreaSnapshot(ctx context.Context, area AreaID) ([]byte, Seq, Epoch, error)

	// Character returns the account's character, or ErrNotFound.
	Character(ctx context.Context, account AccountID) (Character, error)
	// EnsureCharacter returns the account's character, creating it
	// (unplaced) in home if it has none; created reports which.
	EnsureCharacter(ctx context.Context, account AccountID, home AreaID, now time.Time) (c Character, created bool, err error)
	// CharactersIn returns the characters whose row names area.
	CharactersIn(ctx context.Context, area AreaID) ([]Character, error)

	// Holdings calls fn with every stored Area's blob and every
	// character's state, read at one instant (one statement), one at a
	// time (a realm's blobs need not fit in memory at once): what holds
	// items, for counting them (docs/items.md). Areas never stored have no
	// blob. An error of fn stops the read and is returned.
	Holdings(ctx context.Context, fn func(Holding) error) error

	// BeginTransfer records a pending transfer (Status and Result are
	// ignored; Expires is required) without moving the character.
	// Idempotent on ID: a replay returns the recorded transfer; the id
	// reused for another crossing is ErrConflict.
	BeginTransfer(ctx context.Context, t Transfer) (Transfer, error)
	// MoveCharacter performs a crossing in one transaction, idempotent on
	// t.ID: a finished transfer with that id is returned as recorded and
	// nothing changes; a pending one past its expiry is rejected with
	// ResultTimeout; one fenced by FromEpoch or FromSeq is rejected with
	// ResultStaleSource or ResultUnsaved; otherwise the character moves
	// from t.From to t.To at (X, Y), Placed as t says (done, ResultMoved),
	// or, when its row does not name t.From, stays put (rejected,
	// ResultNotInSource). The move never writes the character's state. A transfer
	// with no pending record is recorded by this call (a zero Created or
	// Expires becomes now) and cannot time out. The id reused for another
	// crossing is ErrConflict.
	MoveCharacter(ctx context.Context, t Transfer, now time.Time) (Transfer, error)
	// RejectTransfer rejects a pending transfer with result; a finished
	// one is returned unchanged.
	RejectTransfer(ctx context.Context, id TransferID, result TransferResult) (Transfer, error)
	// Transfer returns the transfer with id, or ErrNotFound.
	Transfer(ctx context.Context, id TransferID) (Transfer, error)
	// PendingTransfers returns the pending transfers, oldest first.
	PendingTransfers(ctx context.Context) ([]Transfer, error)
	// ExpireTransfers rejects with ResultTimeout every pending transfer
	// expired at now, and returns them.
	ExpireTransfers(ctx context.Context, now time.Time) ([]Transfer, error)
	// PruneTransfers deletes finished transfers created before olderThan;
	// it never deletes a pending one.
	PruneTransfers(ctx context.Context, olderThan time.Time) (int, error)

	// PutHost records (or updates, by its credential) an area host the
	// director spawned, so that a director after it can adopt it.
	PutHost(ctx context.Context, h HostRecord) error
	// Hosts returns the recorded hosts, oldest first.
	Hosts(ctx context.Context) ([]HostRecord, error)
	// DeleteHost forgets the host of credential (it exited, or did not
	// come back); an unknown one is not an error.
	DeleteHost(ctx context.Context, credential TokenHash) error

	// RealmSettings returns the realm's settings row.
	RealmSettings(ctx context.Context) (RealmSettings, error)
	// UpdateRealmSettings replaces the realm's settings row and records
	// ch in the audit log, in one transaction: the settings never change
	// unrecorded.
	UpdateRealmSettings(ctx context.Context, s RealmSettings, ch Change) error

	// Changes returns the audit log's entries with ids below before (0:
	// from the newest), newest first, at most limit (1..1000).
	Changes(ctx context.Context, before int64, limit int) ([]Change, error)

	// AddSample records a director sample.
	AddSample(ctx context.Context, s Sample) error
	// Samples returns the samples taken at or after since, oldest first.
	Samples(ctx context.Context, since time.Time) ([]Sample, error)
	// PruneSamples deletes the samples taken before before.
	PruneSamples(ctx context.Context, before time.Time) (int, error)
}

// NameKey is the form in which two accounts' display names must differ:
// case folded (Unicode's full folding), so that "Demo", "DEMO" and "demo"
// are one name. Names reach the store in their PRECIS Nickname form
// already (full-width forms mapped, spaces folded: director/auth).
func NameKey(name string) string { return cases.Fold().String(name) }

// Validate checks a NewAccount and returns it normalised.
func (a NewAccount) Validate() (NewAccount, error) {
	a.Email = NormalizeEmail(a.Email)
	if a.Email == "" || !strings.Contains(a.Email, "@") {
		return a, ErrInvalid
	}
	return a, nil
}

// MaxTemplate bounds the length of an Area's template name, in bytes.
const MaxTemplate = 64

// Validate checks a NewArea and returns it with its Template filled in
// (Kind when empty).
func (a NewArea) Validate() (NewArea, error) {
	if a.Owner == 0 || a.W <= 0 || a.H <= 0 || a.Kind == "" || len(a.Kind) > MaxTemplate || len(a.Template) > MaxTemplate {
		return a, ErrInvalid
	}
	if a.Template == "" {
		a.Template = a.Kind
	}
	return a, nil
}

// Validate checks a Transfer's identity fields.
func (t Transfer) Validate() error {
	if t.ID == "" || t.Account == 0 || t.From == 0 || t.To == 0 {
		return ErrInvalid
	}
	return nil
}

// SameCrossing reports whether o names the same crossing as t (account and
// areas), the check behind ErrConflict.
func (t Transfer) SameCrossing(o Transfer) bool {
	return t.Account == o.Account && t.From == o.From && t.To == o.To
}
