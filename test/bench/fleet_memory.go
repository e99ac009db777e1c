package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/test/framework"
)

var fleetRSSAlarm = flag.String("rss-alarm", "6Gi", "fleet: when a process of the fleet (hub, spoke, simulator) first holds more RSS than this, "+
	"save its heap and goroutine profiles (pprof processes) and say where; 0 turns it off")

// memoryWatch samples the RSS of the fleet's processes every few seconds
// for their peaks, and profiles a process the first time it grows past
// the alarm, so that a run which outgrows the machine leaves the reason
// behind.
type memoryWatch struct {
	alarm int64
	procs []watchedProcess

	mu    sync.Mutex
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

func (f *fleet) watchMemory(ctx context.Context) (*memoryWatch, error) {
	q, err := resource.ParseQuantity(*fleetRSSAlarm)
	if err != nil {
		return nil, fmt.Errorf("-rss-alarm %q: %w", *fleetRSSAlarm, err)
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
	procs = append(procs, watchedProcess{name: "spoke", pid: f.spoke.Pid(), pprofDir: f.spoke.DataDir},
		watchedProcess{name: "simulator", pid: os.Getpid()})
	ctx, cancel := context.WithCancel(ctx)
	w := &memoryWatch{alarm: q.Value(), procs: procs, peaks: make([]int64, len(procs)), stop: cancel, done: make(chan struct{})}
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
			w.mu.Lock()
			w.peaks[i] = max(w.peaks[i], rss)
			w.mu.Unlock()
			if w.alarm > 0 && rss > w.alarm && !alarmed[i] {
				alarmed[i] = true
				w.profile(ctx, p, rss)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// profile saves the heap and goroutines of p, which holds rss, where
// the run's profiles go (or the temporary directory), and says so.
func (w *memoryWatch) profile(ctx context.Context, p watchedProcess, rss int64) {
	dir := *fleetPprof
	if dir == "" {
		dir = os.TempDir()
	}
	stamp := time.Now().Format("150405")
	var saved []string
	save := func(kind, url string) {
		file := filepath.Join(dir, fmt.Sprintf("alarm-%s-%s-%s.pprof", p.name, kind, stamp))
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
	fmt.Fprintf(os.Stderr, "bench: the %s holds %s of RSS (over -rss-alarm %s); profiles: %v\n", p.name, mib(rss), *fleetRSSAlarm, saved)
}

// print stops the watch and prints each process's peak RSS.
func (w *memoryWatch) print() {
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, p := range w.procs {
		row("peak RSS of the "+p.name+" (sampled every 5 s)", mib(w.peaks[i]), "")
	}
}
