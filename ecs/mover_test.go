package ecs

import "testing"

// TestPacedKeepsThePace: a client stepping at the budget's rate, whose
// steps come late now and then (up to a Period), is answered at that
// rate: a late step does not push the later ones back, as Stepped would;
// and the credit never exceeds one step, however long the pause.
func TestPacedKeepsThePace(t *testing.T) {
	const period = 4
	// Step k arrives at tick 100+4k, late by lateness[k] ticks.
	lateness := []uint64{0, 3, 0, 0, 2, 0, 4, 0, 0, 1, 0, 0}
	run := func(spend func(*Mover, uint64)) (waited uint64) {
		m := Mover{Period: period}
		for k, late := range lateness {
			at := 100 + period*uint64(k) + late
			now := max(at, m.ReadyAt) // the first tick its turn allows
			spend(&m, now)
			waited += now - at
		}
		return waited
	}
	if w := run((*Mover).Paced); w != 0 {
		t.Errorf("paced: the steps waited %d ticks in all; want 0 (each late step is made up)", w)
	}
	if w := run((*Mover).Stepped); w == 0 {
		t.Error("stepped: no step waited; the case does not tell the two apart")
	}
	// After a pause, one step of credit: two steps a tick apart, then one
	// a Period.
	m := Mover{Period: period}
	m.Paced(10)
	if !m.Ready(1000) {
		t.Fatal("not ready after a pause")
	}
	m.Paced(1000)
	if !m.Ready(1001) {
		t.Fatal("after a pause: no credit for a second step a tick later")
	}
	m.Paced(1001)
	if m.Ready(1000+period-1) || !m.Ready(1000+period) {
		t.Fatalf("after the credit: next step due at %d; want %d", m.ReadyAt, 1000+period)
	}
	// Over any span, at most one step more than its Periods.
	m = Mover{Period: period}
	steps := 0
	for now := uint64(5000); now < 5000+period*50; now++ {
		if m.Ready(now) {
			m.Paced(now)
			steps++
		}
	}
	if steps > 50+1 {
		t.Fatalf("%d steps in %d Periods; at most one more", steps, 50)
	}
}
