package dirclient

import (
	"encoding/json"
	"testing"
)

// TestJoinIDIsAStringOnTheWire: a join_id above 2^53 travels as a decimal
// string and decodes to the exact uint64; a JSON number is refused.
func TestJoinIDIsAStringOnTheWire(t *testing.T) {
	const id = uint64(1796069276979109503) // above 2^53: a float64 rounds it
	tests := []struct {
		name    string
		raw     string
		want    uint64
		wantErr bool
	}{
		{"string", `{"grant":"g","ws_url":"ws://h/ws","join_id":"1796069276979109503","area":1}`, id, false},
		{"max uint64", `{"join_id":"18446744073709551615"}`, 1<<64 - 1, false},
		{"number", `{"join_id":1796069276979109503}`, 0, true},
		{"not digits", `{"join_id":"12x"}`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var j Join
			err := json.Unmarshal([]byte(tt.raw), &j)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%s) err = %v; want error %v", tt.raw, err, tt.wantErr)
			}
			if err == nil && j.JoinID != tt.want {
				t.Errorf("JoinID = %d; want %d", j.JoinID, tt.want)
			}
		})
	}
	b, err := json.Marshal(Join{JoinID: id})
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if got, want := raw["join_id"], "1796069276979109503"; got != want {
		t.Errorf("marshalled join_id = %#v; want the string %q", got, want)
	}
}
