//go:build js && wasm

// Command wasm is ley's engine for the browser: package engine built for
// GOOS=js GOARCH=wasm, with the content built into it (no recipes: they
// are the server's secret). Run by Go's wasm_exec.js, it sets
// globalThis.leyEngine and then waits for calls for as long as the page
// lives. Its surface (typed in web/sdk/src/engine.ts, whose loadEngine
// wraps it; web/sdk/README.md shows its use):
//
//   - leyEngine.sim(template, seed): an Area of a template of the
//     built-in content (join, intent, step, bodies, answers, free);
//   - leyEngine.replica(areaInfoFrame): the Area an area_info describes,
//     for prediction (static, walkable, free, and a handle);
//   - leyEngine.offline(save?): the offline Area behind the client
//     protocol (receive, step, take, save, free);
//   - the instance's exports leyBuffer and leyPredict: a replica's
//     prediction, its arguments and result in the engine's memory, called
//     with no syscall/js call (one of those costs tens of µs).
//
// A method that fails returns a JavaScript Error instead of its result
// (a Go callback cannot throw); loadEngine throws it. `go generate ./web` builds it into web/dist.
package main

//lint:file-ignore U1000 the go:wasmexport functions (and what they use) are called by JavaScript, not Go

import (
	"encoding/binary"
	"fmt"
	"syscall/js"
	"unsafe"

	"github.com/leyworks/ley/content"
	"github.com/leyworks/ley/ecs"
	"github.com/leyworks/ley/net/wire"
	"github.com/leyworks/ley/systems/tell"
	"github.com/leyworks/ley/web/engine"
)

func main() {
	api := js.Global().Get("Object").New()
	api.Set("protocol", int(wire.Version))
	api.Set("sim", guard("sim", newSim))
	api.Set("replica", guard("replica", newReplica))
	api.Set("offline", guard("offline", newOffline))
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

// int32Array returns vals as a new Int32Array, copied in one call.
func int32Array(vals []int32) js.Value {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	u := uint8Array(b)
	return js.Global().Get("Int32Array").New(u.Get("buffer"), 0, len(vals))
}

// int32s reads an Int32Array argument, copied in one call (an array of
// numbers, one by one).
func int32s(v js.Value) []int32 {
	if v.IsUndefined() || v.IsNull() {
		return nil
	}
	n := v.Get("length").Int()
	out := make([]int32, n)
	if !v.InstanceOf(js.Global().Get("Int32Array")) {
		for i := range out {
			out[i] = int32(v.Index(i).Int())
		}
		return out
	}
	b := make([]byte, 4*n)
	js.CopyBytesToGo(b, js.Global().Get("Uint8Array").New(v.Get("buffer"), v.Get("byteOffset"), 4*n))
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// object makes a JavaScript object of methods, with a free() that runs
// drop, which forgets what they hold: a method called after free(), or
// one that panics (too few arguments), returns an Error. (The methods' js.Funcs stay, a few bytes each: one
// released would answer a later call with undefined.)
func object(methods map[string]func(args []js.Value) any, drop func()) js.Value {
	o := js.Global().Get("Object").New()
	freed := false
	for name, fn := range methods {
		o.Set(name, guard(name, func(_ js.Value, args []js.Value) any {
			if freed {
				return fail(fmt.Errorf("%s: called after free()", name))
			}
			return fn(args)
		}))
	}
	o.Set("free", js.FuncOf(func(js.Value, []js.Value) any {
		if !freed {
			freed = true
			drop()
		}
		return nil
	}))
	return o
}

// guard makes fn a JavaScript function whose panics (too few arguments,
// or a bug) fail the call alone, with an Error: a panic would end the
// engine for the page.
func guard(name string, fn func(js.Value, []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) (ret any) {
		defer func() {
			if p := recover(); p != nil {
				ret = fail(fmt.Errorf("%s: %v", name, p))
			}
		}()
		return fn(this, args)
	})
}

// buf is the memory the fast calls share with JavaScript (leyBuffer,
// leyPredict): JavaScript writes their arguments there and reads their
// results, which costs no call of syscall/js (one costs tens of µs).
var buf []int32

// leyBuffer makes buf hold at least n values and returns its address in
// the engine's memory (the instance's exports.mem).
//
//go:wasmexport leyBuffer
func leyBuffer(n int32) uint32 {
	if int(n) > len(buf) || len(buf) == 0 {
		buf = make([]int32, max(int(n), 2*len(buf), 256))
	}
	return uint32(uintptr(unsafe.Pointer(&buf[0])))
}

// replicas are the live replicas, by handle (nil: freed).
var replicas []*engine.Replica

// pending is leyPredict's scratch.
var pending []engine.Pending

// leyPredict predicts on replica handle: the body at (x, y) facing
// facing, the others' squares in buf[0:2*others], the pending intents'
// (wire kind, dir) pairs after them. It writes x, y, facing to buf[0:3]
// and returns 0, or -1 for a handle that names no replica (or buffers
// too short), -2 for a call the engine failed (a panic, recovered).
//
//go:wasmexport leyPredict
func leyPredict(handle, x, y, facing, others, npending int32) (rc int32) {
	defer func() {
		if p := recover(); p != nil {
			rc = -2 // a bug of the engine's: this call fails, the engine lives on
		}
	}()
	if handle < 0 || int(handle) >= len(replicas) || replicas[handle] == nil || others < 0 || npending < 0 || int(2*(others+npending)) > len(buf) {
		return -1
	}
	pending = pending[:0]
	for i := 2 * others; i < 2*(others+npending); i += 2 {
		in := wire.Intent{Kind: wire.IntentKind(buf[i]), Dir: wire.Dir(buf[i+1])}
		it := tell.Intent(&in, 0)
		pending = append(pending, engine.Pending{Kind: it.Kind, Dir: it.Dir})
	}
	pose := replicas[handle].Predict(engine.Pose{X: x, Y: y, Facing: ecs.Dir(facing)}, buf[:2*others], pending)
	buf[0], buf[1], buf[2] = pose.X, pose.Y, int32(pose.Facing)
	return 0
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
	}, func() { s = nil })
}

// newReplica: leyEngine.replica(areaInfoFrame) builds the Area an
// area_info frame describes, for prediction: an object with static,
// walkable, free and its handle, which leyPredict takes.
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
	handle := len(replicas)
	replicas = append(replicas, r)
	o := object(map[string]func([]js.Value) any{
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
		// walkable(x, y): the map lets a body stand there, bodies aside.
		"walkable": func(a []js.Value) any { return r.Walkable(int32(a[0].Int()), int32(a[1].Int())) },
	}, func() { replicas[handle], r = nil, nil })
	// predict goes through leyPredict (the SDK's loadEngine wraps it).
	o.Set("handle", handle)
	return o
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
	}, func() { o = nil })
}
