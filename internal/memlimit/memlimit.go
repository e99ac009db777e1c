// Package memlimit sets the Go runtime's soft memory limit of a
// long-running process: from a flag, from GOMEMLIMIT, or from the memory
// limit of the cgroup (container) the process runs in.
//
// The limit makes the garbage collector work harder as the heap nears it,
// instead of letting the heap grow to twice what is live (GOGC=100) and
// holding on to memory the process no longer uses. It is soft: a live heap
// above it is still served, at the cost of more frequent collections.
package memlimit

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// CgroupFraction is the share of a cgroup's memory limit taken as the
// soft limit when none is given: the rest is left for what the Go runtime
// does not count (mapped files such as etcd's database, and the kernel's
// page cache charged to the cgroup).
const CgroupFraction = 0.8

// cgroupFiles are where cgroup v2 and v1 keep the memory limit of the
// process's cgroup, as a container sees it.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// Set sets the soft memory limit to limit bytes when limit > 0. Otherwise
// it leaves a limit from GOMEMLIMIT alone, or sets CgroupFraction of the
// cgroup's memory limit when there is one. It returns the limit in effect
// (0 for none) and where it came from, for the log.
func Set(limit int64) (int64, string) {
	switch {
	case limit > 0:
		debug.SetMemoryLimit(limit)
		return limit, "flag"
	case os.Getenv("GOMEMLIMIT") != "":
		return debug.SetMemoryLimit(-1), "GOMEMLIMIT"
	}
	for _, f := range cgroupFiles {
		if cg, ok := readLimit(f); ok {
			limit = int64(float64(cg) * CgroupFraction)
			debug.SetMemoryLimit(limit)
			return limit, fmt.Sprintf("%.0f %% of the cgroup limit in %s", CgroupFraction*100, f)
		}
	}
	return 0, "none"
}

// readLimit reads a cgroup memory limit file; "max" and v1's "no limit"
// (a number near MaxInt64) are no limit.
func readLimit(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	return parseLimit(string(b))
}

func parseLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0, false
	}
	return n, true
}
