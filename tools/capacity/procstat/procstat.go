package procstat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrUnsupported is returned where /proc does not exist.
var ErrUnsupported = errors.New("procstat: /proc is Linux only")

// userHZ is the kernel's clock tick for /proc/<pid>/stat times.
const userHZ = 100

// Sample is one reading of a process.
type Sample struct {
	PID    int
	At     time.Time
	CPU    time.Duration // user + system time since the process started
	RSSKiB int64         // resident set (VmRSS)
}

// Read samples process pid. It costs two small file reads.
func Read(pid int) (Sample, error) {
	if runtime.GOOS != "linux" {
		return Sample{}, ErrUnsupported
	}
	s := Sample{PID: pid, At: time.Now()}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, fmt.Errorf("procstat: %w", err)
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return s, fmt.Errorf("procstat: /proc/%d/stat: unexpected shape", pid)
	}
	f := strings.Fields(string(data[i+2:]))
	if len(f) < 13 {
		return s, fmt.Errorf("procstat: /proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return s, fmt.Errorf("procstat: /proc/%d/stat: %w", pid, err)
	}
	s.CPU = time.Duration(ut+st) * time.Second / userHZ
	s.RSSKiB, err = rssKiB(pid)
	return s, err
}

func rssKiB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fs := strings.Fields(v)
			if len(fs) == 0 {
				break
			}
			return strconv.ParseInt(fs[0], 10, 64)
		}
	}
	return 0, sc.Err()
}

// CPUPercent is the CPU used between two samples of one process as a
// percentage of one core (200 means two cores busy). It is 0 if the
// samples are not in order.
func CPUPercent(a, b Sample) float64 {
	wall := b.At.Sub(a.At)
	if wall <= 0 || b.CPU < a.CPU {
		return 0
	}
	return 100 * (b.CPU - a.CPU).Seconds() / wall.Seconds()
}

// Self is the calling process's own resource use from getrusage.
type Self struct {
	At        time.Time
	User, Sys time.Duration
	MaxRSSKiB int64
}

// ReadSelf reads getrusage(RUSAGE_SELF).
func ReadSelf() (Self, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Self{}, fmt.Errorf("procstat: getrusage: %w", err)
	}
	return Self{
		At:        time.Now(),
		User:      time.Duration(ru.Utime.Nano()),
		Sys:       time.Duration(ru.Stime.Nano()),
		MaxRSSKiB: int64(ru.Maxrss),
	}, nil
}
