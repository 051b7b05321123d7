package realmtest_test

import (
	"net/http"
	"os"
	"os/exec"
	"testing"

	"github.com/leyworks/ley/internal/realmtest"
	"github.com/leyworks/ley/tools/capacity/ladder"
)

func TestMain(m *testing.M) { os.Exit(realmtest.Main(m)) }

// TestStart: the binary is built once and runs; a realm started from it
// is ready when Start returns and answers with the flags it was given.
func TestStart(t *testing.T) {
	bin := realmtest.Binary(t)
	if again := realmtest.Binary(t); again != bin {
		t.Errorf("Binary = %s, then %s; want one build", bin, again)
	}
	if out, err := exec.Command(bin, "run", "--help").CombinedOutput(); err != nil {
		t.Fatalf("ley run --help: %v\n%s", err, out)
	}
	r := realmtest.Start(t, func(c *ladder.Config) { c.MaxHosts = 1 })
	resp, err := http.Get(r.URL() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /readyz = %s; want 200 OK", resp.Status)
	}
}
