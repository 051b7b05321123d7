//go:build !linux

package director

import (
	"log/slog"
	"os/exec"
)

// setChildAttrs does nothing off Linux (no parent-death signal there).
func setChildAttrs(cmd *exec.Cmd) {}

// limitChild does nothing off Linux.
func limitChild(pid int, nofile uint64, oomAdj int, log *slog.Logger) {}
