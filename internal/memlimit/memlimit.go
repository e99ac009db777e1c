// Package memlimit sets how much memory the Go runtime of a long-running
// process holds: its soft memory limit (from a flag, from GOMEMLIMIT, or
// from the memory limit of the cgroup, the container, the process runs
// in) and its garbage collector's percent (from a flag, from GOGC, or a
// default).
//
// The percent is how far the heap may grow past what the last collection
// found live before the next one starts. The limit makes the collector
// work harder as the heap nears it, instead of letting the heap grow by
// that percent and holding on to memory the process no longer uses. It is
// soft: a live heap above it is still served, at the cost of more
// frequent collections.
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

// DefaultGCPercent is the collector's percent a hub runs with unless told
// otherwise: a collection starts when the heap has grown by half of what
// the last one found live, not by all of it (Go's default, GOGC=100). A
// hub's heap is mostly objects its caches hold for as long as it runs, so
// collecting more often costs little once the fleet is quiet; and a burst
// (a fleet joining, works fanned out) then spreads what stays live over
// fewer spans, which the collector cannot give back while one object in
// them lives (docs/benchmarks.md, "Hub settings").
const DefaultGCPercent = 50

// SetGCPercent sets the collector's percent to percent when it is > 0.
// Otherwise it leaves one from GOGC alone, or sets DefaultGCPercent. It
// returns the percent in effect (-1 for GOGC=off) and where it came from,
// for the log.
func SetGCPercent(percent int) (int, string) {
	switch {
	case percent > 0:
		debug.SetGCPercent(percent)
		return percent, "flag"
	case os.Getenv("GOGC") != "":
		// SetGCPercent returns the previous setting: GOGC's, set again.
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p, "GOGC"
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent, "default"
}
