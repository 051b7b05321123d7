package spawner

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// setChildAttrs gives a host its own process group, so that a Ctrl-C in
// the terminal reaches the director alone (which stops its hosts in order
// when the realm stops) and a signal to the director (SIGTERM, SIGKILL)
// leaves its hosts running: they register again with the next director.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// limitChild sets a host's file descriptor limit and raises its
// oom_score_adj, so that under memory pressure the kernel kills a host
// (whose Areas come back from their snapshots) rather than the director.
func limitChild(pid int, nofile uint64, oomAdj int, log *slog.Logger) {
	if nofile > 0 {
		// Raise the soft limit within the hard one: raising the hard limit
		// needs CAP_SYS_RESOURCE, which containers often drop.
		var cur unix.Rlimit
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &cur); err == nil {
			lim := unix.Rlimit{Cur: min(nofile, cur.Max), Max: cur.Max}
			if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
				log.Warn("set host fd limit", "pid", pid, "err", err)
			}
		}
	}
	if oomAdj != 0 {
		path := fmt.Sprintf("/proc/%d/oom_score_adj", pid)
		if err := os.WriteFile(path, []byte(strconv.Itoa(oomAdj)), 0); err != nil {
			log.Warn("set host oom_score_adj", "pid", pid, "err", err)
		}
	}
}
