//go:build leytest

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

// TestPanicFiresAtTheArmedHit: an armed panic point panics at exactly its
// armed hit and only then; Armed tells armed points from others.
func TestPanicFiresAtTheArmedHit(t *testing.T) {
	if os.Getenv("FAILPOINT_CHILD") == "1" {
		if !Armed(AreaTickPanic+"7") || Armed(AreaTickPanic+"8") {
			os.Stdout.WriteString("armed wrong\n")
			return
		}
		for i := 1; i <= 3; i++ {
			func() {
				defer func() {
					if p := recover(); p != nil {
						os.Stdout.WriteString("panicked\n")
					}
				}()
				Panic(AreaTickPanic + "7")
				os.Stdout.WriteString("passed\n")
			}()
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPanicFiresAtTheArmedHit$")
	cmd.Env = append(os.Environ(), "FAILPOINT_CHILD=1", "LEY_FAILPOINT="+AreaTickPanic+"7@2")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if want := "passed\npanicked\npassed\nPASS\n"; string(out) != want {
		t.Fatalf("child printed %q; want %q", out, want)
	}
}
