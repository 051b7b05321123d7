//go:build js && wasm

// Command wasm is ley's engine for the browser: package engine built for
// GOOS=js GOARCH=wasm, with the content built into it (no recipes: they
// are the server's secret). Run by Go's wasm_exec.js, it sets
// globalThis.leyEngine (its surface is documented in web/sdk/src/engine.ts
// and web/sdk/README.md) and then waits for calls for as long as the page
// lives. A method that fails returns a JavaScript Error instead of its
// result. `go generate ./web` builds it into web/dist.
package main

import (
	"fmt"
	"syscall/js"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/tell"
	"github.com/leyworks/ley/web/engine"
)

func main() {
	api := js.Global().Get("Object").New()
	api.Set("protocol", int(wire.Version))
	api.Set("sim", js.FuncOf(newSim))
	api.Set("replica", js.FuncOf(newReplica))
	api.Set("offline", js.FuncOf(newOffline))
	js.Global().Set("leyEngine", api)
	if cb := js.Global().Get("leyEngineReady"); cb.Type() == js.TypeFunction {
		cb.Invoke(api)
	}
	select {} // the engine lives as long as the page
}

// fail turns a Go error into a JavaScript Error, returned (not thrown:
// a Go callback cannot throw) for the caller to throw; the SDK's
// loadEngine wraps every method so that it does.
func fail(err error) any {
	return js.Global().Get("Error").New(err.Error())
}

// bytesOf copies a Uint8Array argument into Go.
func bytesOf(v js.Value) []byte {
	if v.IsUndefined() || v.IsNull() {
		return nil
	}
	b := make([]byte, v.Get("length").Int())
	js.CopyBytesToGo(b, v)
	return b
}

// uint8Array copies b into a new Uint8Array.
func uint8Array(b []byte) js.Value {
	u := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u, b)
	return u
}

// int32Array returns vals as a new Int32Array.
func int32Array(vals []int32) js.Value {
	u := js.Global().Get("Int32Array").New(len(vals))
	for i, v := range vals {
		u.SetIndex(i, v)
	}
	return u
}

// int32s reads an Int32Array (or an array of numbers) argument.
func int32s(v js.Value) []int32 {
	if v.IsUndefined() || v.IsNull() {
		return nil
	}
	out := make([]int32, v.Get("length").Int())
	for i := range out {
		out[i] = int32(v.Index(i).Int())
	}
	return out
}

// object makes a JavaScript object of methods.
func object(methods map[string]func(args []js.Value) any) js.Value {
	o := js.Global().Get("Object").New()
	for name, fn := range methods {
		o.Set(name, js.FuncOf(func(_ js.Value, args []js.Value) any { return fn(args) }))
	}
	return o
}

// newSim: leyEngine.sim(template, seed) builds an Area of the embedded
// content's template.
func newSim(_ js.Value, args []js.Value) any {
	if len(args) < 2 {
		return fail(fmt.Errorf("sim(template, seed)"))
	}
	s, err := engine.NewSim(content.Default(), args[0].String(), uint64(args[1].Int()), nil)
	if err != nil {
		return fail(err)
	}
	var buf []int32
	return object(map[string]func([]js.Value) any{
		// join(account) puts a player at the next spawn point: its entity id.
		"join": func(a []js.Value) any {
			id, err := s.Join(uint64(a[0].Int()), true, nil, 0, 0, false)
			if err != nil {
				return fail(err)
			}
			return id
		},
		// intent(id, kind, dir, x, y, seq) posts an intent (wire kinds).
		"intent": func(a []js.Value) any {
			in := wire.Intent{Kind: wire.IntentKind(a[1].Int()), Dir: wire.Dir(a[2].Int()), Target: wire.Cell{X: int32(a[3].Int()), Y: int32(a[4].Int())}, Seq: uint32(a[5].Int())}
			ok, err := s.Post(uint32(a[0].Int()), tell.Intent(&in, 0))
			if err != nil {
				return fail(err)
			}
			return ok
		},
		"step": func([]js.Value) any { s.Step(); return nil },
		// bodies(): id, x, y, facing, hp of every body, by id.
		"bodies": func([]js.Value) any { buf = s.Bodies(buf[:0]); return int32Array(buf) },
		// answers(): body, seq, wire code of every answer of the last tick.
		"answers": func([]js.Value) any {
			var out []int32
			for _, a := range s.Answers() {
				out = append(out, int32(a.Body), int32(a.Seq), int32(tell.Code(a.Outcome)))
			}
			return int32Array(out)
		},
	})
}

// newReplica: leyEngine.replica(areaInfoFrame) builds the Area an
// area_info frame describes, for prediction.
func newReplica(_ js.Value, args []js.Value) any {
	if len(args) < 1 {
		return fail(fmt.Errorf("replica(areaInfoFrame)"))
	}
	m, err := wire.Decode(bytesOf(args[0]))
	if err != nil {
		return fail(err)
	}
	info, ok := m.(*wire.AreaInfo)
	if !ok {
		return fail(fmt.Errorf("replica: a %T frame, not area_info", m))
	}
	r, err := engine.NewReplica(info)
	if err != nil {
		return fail(err)
	}
	var pending []engine.Pending
	return object(map[string]func([]js.Value) any{
		// static(frame) lays the map of one cell.
		"static": func(a []js.Value) any {
			m, err := wire.Decode(bytesOf(a[0]))
			if err != nil {
				return fail(err)
			}
			st, ok := m.(*wire.Static)
			if !ok {
				return fail(fmt.Errorf("static: a %T frame", m))
			}
			if err := r.Static(st); err != nil {
				return fail(err)
			}
			return nil
		},
		// predict(x, y, facing, others, pending): others are x, y pairs;
		// pending kind, dir pairs (wire kinds). It returns [x, y, facing].
		"predict": func(a []js.Value) any {
			p := int32s(a[4])
			pending = pending[:0]
			for i := 0; i+1 < len(p); i += 2 {
				in := wire.Intent{Kind: wire.IntentKind(p[i]), Dir: wire.Dir(p[i+1])}
				it := tell.Intent(&in, 0)
				pending = append(pending, engine.Pending{Kind: it.Kind, Dir: it.Dir})
			}
			pose, err := r.Predict(engine.Pose{X: int32(a[0].Int()), Y: int32(a[1].Int()), Facing: ecs.Dir(a[2].Int())}, int32s(a[3]), pending)
			if err != nil {
				return fail(err)
			}
			return int32Array([]int32{pose.X, pose.Y, int32(pose.Facing)})
		},
		// walkable(x, y): the map lets a body stand there, bodies aside.
		"walkable": func(a []js.Value) any { return r.Walkable(int32(a[0].Int()), int32(a[1].Int())) },
	})
}

// newOffline: leyEngine.offline(save?) builds the offline Area (from a
// save, when given): a host behind the client protocol.
func newOffline(_ js.Value, args []js.Value) any {
	var saved []byte
	if len(args) > 0 {
		saved = bytesOf(args[0])
	}
	o, err := engine.NewOffline(content.Default(), saved)
	if err != nil {
		return fail(err)
	}
	return object(map[string]func([]js.Value) any{
		// receive(frame) takes a frame the client sent.
		"receive": func(a []js.Value) any { o.Receive(bytesOf(a[0])); return nil },
		// step() runs one tick.
		"step": func([]js.Value) any { o.Step(); return nil },
		// take() returns the frames for the client, in order.
		"take": func([]js.Value) any {
			frames := o.Take()
			arr := js.Global().Get("Array").New(len(frames))
			for i, f := range frames {
				arr.SetIndex(i, uint8Array(f))
			}
			return arr
		},
		// save() returns the offline save (a Uint8Array).
		"save": func([]js.Value) any {
			b, err := o.Save()
			if err != nil {
				return fail(err)
			}
			return uint8Array(b)
		},
	})
}
