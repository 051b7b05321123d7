//go:build !linux

package spawner

import (
	"log/slog"
	"os/exec"
	"syscall"
)

// setChildAttrs gives a host its own process group.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// limitChild does nothing off Linux.
func limitChild(pid int, nofile uint64, oomAdj int, log *slog.Logger) {}
