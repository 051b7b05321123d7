package ladder

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Pin is where a ladder's processes run: the realm (director and hosts)
// on Realm's CPUs, the load driver on Driver's. The two sets must not
// overlap: a rung then measures what Realm's cores hold.
type Pin struct {
	Realm, Driver []int
}

// ParsePin reads "REALM:DRIVER", each a CPU list as taskset takes it
// ("0", "0,2", "0-3"), e.g. "0:1".
func ParsePin(s string) (*Pin, error) {
	realm, driver, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("%w: pin %q: want REALM:DRIVER CPU lists, e.g. 0:1", ErrConfig, s)
	}
	var p Pin
	var err error
	if p.Realm, err = parseCPUs(realm); err != nil {
		return nil, fmt.Errorf("%w: pin %q: realm: %w", ErrConfig, s, err)
	}
	if p.Driver, err = parseCPUs(driver); err != nil {
		return nil, fmt.Errorf("%w: pin %q: driver: %w", ErrConfig, s, err)
	}
	for _, c := range p.Realm {
		if slices.Contains(p.Driver, c) {
			return nil, fmt.Errorf("%w: pin %q: CPU %d is in both sets", ErrConfig, s, c)
		}
	}
	return &p, nil
}

// parseCPUs reads a CPU list: numbers and ranges, comma-separated.
func parseCPUs(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1023 {
				return nil, fmt.Errorf("bad CPU range %q", part)
			}
		}
		for c := a; c <= b; c++ {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// String is the pin as ParsePin reads it.
func (p *Pin) String() string { return cpuList(p.Realm) + ":" + cpuList(p.Driver) }

// cpuList writes CPUs as a comma-separated list.
func cpuList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}
