package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/test/framework"
)

var (
	fleetRSSAlarm = flag.String("rss-alarm", "6Gi", "fleet: when a process of the fleet (hub, spoke, simulator) first holds more RSS than this, "+
		"save its heap and goroutine profiles (pprof processes) and say where; 0 turns it off")
	fleetMinAvailable = flag.String("min-available", "1Gi", "fleet: stop the run, after profiling every process, when the machine has less memory available than this (0: never)")
)

// memoryWatch samples the RSS of the fleet's processes every few seconds
// for their peaks, and profiles a process the first time it grows past
// the alarm, so that a run which outgrows the machine leaves the reason
// behind.
type memoryWatch struct {
	alarm, minAvailable int64
	procs               []watchedProcess
	abort               context.CancelCauseFunc
	// peaks is written by run only; print reads it once run returned.
	peaks []int64
	stop  func()
	done  chan struct{}
}

// watchedProcess is one process of the fleet: its name, its pid, and the
// data directory whose pprof.addr names its pprof server ("" for none).
type watchedProcess struct {
	name     string
	pid      int
	pprofDir string
}

func (f *fleet) watchMemory(ctx context.Context, abort context.CancelCauseFunc) (*memoryWatch, error) {
	q, err := resource.ParseQuantity(*fleetRSSAlarm)
	if err != nil {
		return nil, fmt.Errorf("-rss-alarm %q: %w", *fleetRSSAlarm, err)
	}
	floor, err := resource.ParseQuantity(*fleetMinAvailable)
	if err != nil {
		return nil, fmt.Errorf("-min-available %q: %w", *fleetMinAvailable, err)
	}
	var procs []watchedProcess
	for i, pid := range f.hub.pids() {
		p := watchedProcess{name: "hub", pid: pid}
		if i < len(f.hub.pprofDirs) {
			p.pprofDir = f.hub.pprofDirs[i]
		}
		if i > 0 {
			p.name = "hub controllers"
		}
		procs = append(procs, p)
	}
	for i, s := range f.spokes {
		procs = append(procs, watchedProcess{name: fmt.Sprintf("spoke %d", i), pid: s.Pid(), pprofDir: s.DataDir})
	}
	procs = append(procs, watchedProcess{name: "simulator", pid: os.Getpid()})
	ctx, cancel := context.WithCancel(ctx)
	w := &memoryWatch{alarm: q.Value(), minAvailable: floor.Value(), procs: procs, abort: abort,
		peaks: make([]int64, len(procs)), stop: cancel, done: make(chan struct{})}
	go w.run(ctx)
	return w, nil
}

func (w *memoryWatch) run(ctx context.Context) {
	defer close(w.done)
	alarmed := make([]bool, len(w.procs))
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		for i, p := range w.procs {
			rss, err := framework.RSSOf(p.pid)
			if err != nil {
				continue
			}
			w.peaks[i] = max(w.peaks[i], rss)
			if w.alarm > 0 && rss > w.alarm && !alarmed[i] {
				alarmed[i] = true
				w.profile(ctx, p, fmt.Sprintf("holds %s of RSS (over -rss-alarm %s)", mib(rss), *fleetRSSAlarm))
			}
		}
		if avail, err := memAvailable(); err == nil && avail < w.minAvailable {
			for i, p := range w.procs {
				rss, _ := framework.RSSOf(p.pid)
				if !alarmed[i] {
					w.profile(ctx, p, fmt.Sprintf("holds %s of RSS as the machine runs short of memory", mib(rss)))
				}
			}
			w.abort(fmt.Errorf("stopped: the machine had only %s of memory available (-min-available %s)", mib(avail), *fleetMinAvailable))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// profile saves the heap and goroutines of p where the run's profiles go
// (or the temporary directory), and says so and why.
func (w *memoryWatch) profile(ctx context.Context, p watchedProcess, why string) {
	dir := *fleetPprof
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "bench: profile the %s: %v\n", p.name, err)
		return
	}
	stamp := time.Now().Format("150405")
	var saved []string
	save := func(kind, url string) {
		file := filepath.Join(dir, fmt.Sprintf("alarm-%s-%s-%s.pprof", strings.ReplaceAll(p.name, " ", "-"), kind, stamp))
		var err error
		if url == "" {
			err = writeHeapProfile(file)
		} else {
			err = fetch(ctx, url, file)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: profile the %s: %v\n", p.name, err)
			return
		}
		saved = append(saved, file)
	}
	switch {
	case p.pid == os.Getpid():
		save("heap", "")
	case p.pprofDir != "":
		base, err := pprofBase(p.pprofDir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: profile the %s: %v\n", p.name, err)
			return
		}
		save("heap", base+"heap")
		save("goroutine", base+"goroutine")
	}
	if len(saved) == 0 {
		fmt.Fprintf(os.Stderr, "bench: the %s %s; it serves no profiles\n", p.name, why)
		return
	}
	fmt.Fprintf(os.Stderr, "bench: the %s %s; profiles: %s\n", p.name, why, strings.Join(saved, " "))
}

// print stops the watch and prints each process's peak RSS.
func (w *memoryWatch) print() {
	w.stop()
	<-w.done
	for i, p := range w.procs {
		row("peak RSS of the "+p.name+" (sampled every 5 s)", mib(w.peaks[i]), "")
	}
}

// memAvailable is the machine's MemAvailable (/proc/meminfo), in bytes.
func memAvailable() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			fields := strings.Fields(rest)
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no MemAvailable in /proc/meminfo")
}
