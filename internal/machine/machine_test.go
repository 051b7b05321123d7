package machine

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestAlive: this process lives; a child that exited and was reaped does
// not; a zombie (exited, not yet reaped) does not either.
func TestAlive(t *testing.T) {
	if BootID() == "" {
		t.Fatal("no boot id on this machine (Linux has /proc/sys/kernel/random/boot_id)")
	}
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Exited but not reaped: a zombie until Wait.
	for range 1000 {
		if !Alive(pid) {
			break
		}
		cmd2 := exec.Command("sleep", "0.005")
		_ = cmd2.Run()
	}
	if Alive(pid) {
		t.Error("an exited child (a zombie) is alive")
	}
	_ = cmd.Wait()
	if Alive(pid) {
		t.Error("a reaped child is alive")
	}
	if Alive(0) || Alive(-1) {
		t.Error("pid 0 or -1 is alive")
	}
}

// TestExited: a running child has not exited within a short wait; once
// killed, it has (a zombie, not yet reaped); so has a reaped one.
func TestExited(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if Exited(pid, 20*time.Millisecond) {
		t.Error("a running child has exited")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if !Exited(pid, time.Minute) {
		t.Error("a killed child (a zombie) has not exited within a minute")
	}
	_ = cmd.Wait()
	if !Exited(pid, 0) {
		t.Error("a reaped child has not exited")
	}
	if !Exited(0, 0) || !Exited(-1, 0) {
		t.Error("pid 0 or -1 has not exited")
	}
}
