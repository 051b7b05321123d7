// Package enginetest drives the engine (package engine) with seeded
// scripts of intents and records what it did tick by tick, so that two
// runs (the test process's and the browser's) can be compared: the
// divergence test (web/divergence_test.go) and the engine's own tests use
// it. It is test support, imported by no product code.
package enginetest

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/tell"
	"github.com/leyworks/ley/web/engine"
)

// Intent is one scripted intent: player Player (counted from 0 in join
// order) sends it before tick Tick runs.
type Intent struct {
	Tick, Player int
	Kind         wire.IntentKind
	Dir          wire.Dir
	X, Y         int32
}

// Script is a seeded run of an Area of Template: Players players join
// (accounts 1, 2, ...), then Ticks ticks run, each after its Intents are
// posted. Its JSON form is what the browser's side reads.
type Script struct {
	Template string   `json:"template"`
	Seed     uint64   `json:"seed"`
	Players  int      `json:"players"`
	Ticks    int      `json:"ticks"`
	Intents  [][6]int `json:"intents"` // tick, player, kind, dir, x, y
}

// NewScript draws a script from seed: each tick, each player sends an
// intent with probability rate: a step (60%), an action (20%: doors
// open and close), a move-to a random square of the map (15%), or a stop.
func NewScript(lib *content.Library, template string, seed uint64, players, ticks int, rate float64) (Script, error) {
	tpl, err := lib.Template(template)
	if err != nil {
		return Script{}, err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	s := Script{Template: template, Seed: seed, Players: players, Ticks: ticks}
	for t := range ticks {
		for p := range players {
			if rng.Float64() >= rate {
				continue
			}
			in := [6]int{t, p, 0, rng.IntN(8), 0, 0}
			switch r := rng.IntN(100); {
			case r < 60:
				in[2] = int(wire.IntentStep)
			case r < 80:
				in[2] = int(wire.IntentAction)
			case r < 95:
				in[2], in[4], in[5] = int(wire.IntentMoveTo), rng.IntN(tpl.Map.W), rng.IntN(tpl.Map.H)
			default:
				in[2] = int(wire.IntentStop)
			}
			s.Intents = append(s.Intents, in)
		}
	}
	return s, nil
}

// Tick is what one tick did: every body (id, x, y, facing, hp, ordered by
// id) and every answer (body, seq, wire code), as the browser's engine
// reports them too.
type Tick struct {
	Bodies  []int32 `json:"bodies"`
	Answers []int32 `json:"answers"`
}

// Run runs s on a Sim built from lib, here, and returns its ticks. The
// n-th intent of the script carries seq n+1.
func Run(lib *content.Library, s Script) ([]Tick, error) {
	sim, err := engine.NewSim(lib, s.Template, s.Seed, nil)
	if err != nil {
		return nil, err
	}
	ids := make([]uint32, s.Players)
	for p := range ids {
		if ids[p], err = sim.Join(uint64(p+1), true, nil, 0, 0, false); err != nil {
			return nil, err
		}
	}
	out := make([]Tick, 0, s.Ticks)
	k := 0
	for t := range s.Ticks {
		for ; k < len(s.Intents) && s.Intents[k][0] == t; k++ {
			in := s.Intents[k]
			w := wire.Intent{Seq: uint32(k + 1), Kind: wire.IntentKind(in[2]), Dir: wire.Dir(in[3]), Target: wire.Cell{X: int32(in[4]), Y: int32(in[5])}}
			if _, err := sim.Post(ids[in[1]], tell.Intent(&w, 0)); err != nil {
				return nil, err
			}
		}
		sim.Step()
		tk := Tick{Bodies: sim.Bodies(nil), Answers: []int32{}}
		for _, a := range sim.Answers() {
			tk.Answers = append(tk.Answers, int32(a.Body), int32(a.Seq), int32(tell.Code(a.Outcome)))
		}
		out = append(out, tk)
	}
	return out, nil
}

// Compare compares two runs of one script tick by tick: the ticks whose
// bodies or answers differ, and the first difference, said for people.
func Compare(a, b []Tick) (mismatches int, first string) {
	if len(a) != len(b) {
		return max(len(a), len(b)), fmt.Sprintf("%d ticks against %d", len(a), len(b))
	}
	for t := range a {
		if slices.Equal(a[t].Bodies, b[t].Bodies) && slices.Equal(a[t].Answers, b[t].Answers) {
			continue
		}
		if mismatches == 0 {
			first = fmt.Sprintf("tick %d: bodies %v / %v; answers %v / %v", t, a[t].Bodies, b[t].Bodies, a[t].Answers, b[t].Answers)
			if len(first) > 600 {
				first = first[:600] + "..."
			}
		}
		mismatches++
	}
	return mismatches, first
}
