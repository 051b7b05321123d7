//go:build !linux

package ladder

import "fmt"

// pinSelf is Linux's alone (sched_setaffinity).
func pinSelf(cpus []int) error {
	return fmt.Errorf("%w: pinning is supported on Linux only", ErrConfig)
}

func affinityOf(pid int) (string, error) {
	return "", fmt.Errorf("%w: pinning is supported on Linux only", ErrConfig)
}
