package agent

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/metrics"
	"sort"
	"strings"
)

// profilingHandlers are what Options.Profiling adds to the metrics server:
// Go's pprof endpoints and /debug/memory. They are off by default because
// they reveal the process's internals to whoever reaches the address.
func profilingHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
		"/debug/memory":        http.HandlerFunc(memoryReport),
	}
}

// memoryReport writes, as plain text, where the process's memory goes:
// the Go runtime's own accounting (runtime/metrics /memory/classes/...,
// which add up to what the runtime has mapped), the goroutine count, and
// the kernel's view (/proc/self/smaps_rollup), whose Rss also counts the
// binary's file-backed pages that the runtime does not see.
func memoryReport(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	var names []string
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") || d.Name == "/sched/goroutines:goroutines" ||
			d.Name == "/gc/heap/live:bytes" || d.Name == "/gc/heap/goal:bytes" {
			names = append(names, d.Name)
		}
	}
	sort.Strings(names)
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			fmt.Fprintf(w, "%-55s %12d\n", s.Name, s.Value.Uint64())
		}
	}
	for _, f := range []string{"/proc/self/smaps_rollup", "/proc/self/status"} {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(w, "\n%s: %v\n", f, err)
			continue
		}
		fmt.Fprintf(w, "\n%s:\n%s", f, data)
	}
}
