package ladder

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pinSelf pins every thread of this process to cpus. A thread's mask is
// its own (sched_setaffinity acts on one thread), so each is set; the
// threads the runtime starts later inherit the mask of the thread that
// starts them, pinned by then.
func pinSelf(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	// Threads started meanwhile by a thread not yet pinned would escape:
	// read the threads again until a pass finds none new.
	pinned := map[int]bool{}
	for pass := 0; ; pass++ {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("ladder: pin the driver: %w", err)
		}
		fresh := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || pinned[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH { // ESRCH: the thread ended meanwhile
				return fmt.Errorf("ladder: pin the driver to CPUs %s: %w", cpuList(cpus), err)
			}
			pinned[tid] = true
			fresh++
		}
		if fresh == 0 {
			break
		}
		if pass == 16 {
			return fmt.Errorf("ladder: pin the driver: threads kept starting")
		}
	}
	return nil
}

// affinityOf reads the CPUs process pid may run on, as the kernel says
// (/proc/<pid>/status, Cpus_allowed_list: "0", "0-3", "0,2").
func affinityOf(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			cpus, err := parseCPUs(strings.TrimSpace(v))
			if err != nil {
				return "", fmt.Errorf("process %d: Cpus_allowed_list %q: %w", pid, v, err)
			}
			return cpuList(cpus), nil
		}
	}
	return "", fmt.Errorf("process %d: no Cpus_allowed_list", pid)
}
