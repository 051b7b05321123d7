package failpoint

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestHitKillsAtTheArmedHit re-runs this test binary as a child that hits
// a step three times with the step armed for its second hit: the child
// must die by SIGKILL after exactly one "survived" line.
func TestHitKillsAtTheArmedHit(t *testing.T) {
	if os.Getenv("FAILPOINT_CHILD") == "1" {
		Hit("other.step")
		Hit(HostPortalOut)
		os.Stdout.WriteString("survived\n")
		Hit(HostPortalOut)
		os.Stdout.WriteString("survived\n")
		Hit(HostPortalOut)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHitKillsAtTheArmedHit$")
	cmd.Env = append(os.Environ(), "FAILPOINT_CHILD=1", "LEY_FAILPOINT="+HostPortalOut+"@2, unused")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child ended with %v; want killed", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child status %v; want SIGKILL", ee)
	}
	if string(out) != "survived\n" {
		t.Fatalf("child printed %q; want one survived line", out)
	}
}
