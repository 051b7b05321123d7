package ecs

import (
	arche "github.com/mlange-42/arche/ecs"
	"github.com/mlange-42/arche/generic"
)

// The ECS types systems use, re-exported as aliases so that arche stays
// behind this package: moving to another ECS library changes this file, not
// the systems. They are arche's own types; see its documentation for costs.
type (
	// Entity identifies an entity; copy it, never point to it. The zero
	// value means "none".
	Entity = arche.Entity
	// World is an arche world; an Area owns one.
	World = arche.World

	// Filter1 selects entities with component A (plus any With/Without).
	Filter1[A any] = generic.Filter1[A]
	// Filter2 selects entities with components A and B.
	Filter2[A, B any] = generic.Filter2[A, B]
	// Filter3 selects entities with components A, B and C.
	Filter3[A, B, C any] = generic.Filter3[A, B, C]
	// Filter4 selects entities with components A, B, C and D.
	Filter4[A, B, C, D any] = generic.Filter4[A, B, C, D]
	// Query1 iterates a Filter1's entities.
	Query1[A any] = generic.Query1[A]
	// Query2 iterates a Filter2's entities.
	Query2[A, B any] = generic.Query2[A, B]
	// Query3 iterates a Filter3's entities.
	Query3[A, B, C any] = generic.Query3[A, B, C]
	// Query4 iterates a Filter4's entities.
	Query4[A, B, C, D any] = generic.Query4[A, B, C, D]
	// Map gives random access to component T by entity.
	Map[T any] = generic.Map[T]
	// Comp names a component type for filters' With and Without.
	Comp = generic.Comp
)

// NewFilter1 returns a filter for entities with A. Build filters once (in a
// system's Init) and only query them per tick. A filter queried every tick
// is registered with the Area's world in Init (its Register method:
// arche's filter cache), so that its query visits only the archetypes
// that match instead of testing every archetype the world ever made, each
// a cache line a small, cold Area pays a miss for. A registered filter
// belongs to that one world, as the system instance belongs to its Area
// (a parked Area's world and systems are made anew together).
func NewFilter1[A any]() *Filter1[A] { return generic.NewFilter1[A]() }

// NewFilter2 returns a filter for entities with A and B.
func NewFilter2[A, B any]() *Filter2[A, B] { return generic.NewFilter2[A, B]() }

// NewFilter3 returns a filter for entities with A, B and C.
func NewFilter3[A, B, C any]() *Filter3[A, B, C] { return generic.NewFilter3[A, B, C]() }

// NewFilter4 returns a filter for entities with A, B, C and D.
func NewFilter4[A, B, C, D any]() *Filter4[A, B, C, D] {
	return generic.NewFilter4[A, B, C, D]()
}

// NewMap returns random access to component T in w.
func NewMap[T any](w *World) Map[T] { return generic.NewMap[T](w) }

// T names component type C for a filter's With or Without.
func T[C any]() Comp { return generic.T[C]() }
