// Command bench measures Flotilla and prints the figures recorded in
// docs/benchmarks.md. Each scenario starts the real binaries as separate
// processes on 127.0.0.1 and cleans up after itself.
//
//	go run ./test/bench -bin-dir bin              # every scenario
//	go run ./test/bench -bin-dir bin -run hub     # only the hub's start-up figures
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"time"
)

// scenario is one benchmark: it prints its figures and returns an error if
// it could not measure.
type scenario struct {
	name string
	run  func(ctx context.Context, env *env) error
}

// env is what every scenario gets.
type env struct {
	binDir string
	// workDir is a directory removed when the benchmark ends.
	workDir string
	// pprofHub is where buildPprofHub builds the pprof hub, once for
	// every scenario of the run (a link of the hub takes 10–20 s).
	pprofHub string
}

var scenarios = []scenario{
	{"hub", benchHub},
	{"registration", benchRegistration},
	{"work", benchWork},
	{"restart", benchRestart},
	{"placement", benchPlacement},
	{"fleet", benchFleet},
	{"agent-cpu", benchAgentCPU},
	{"console", benchConsole},
	{"proxy", benchProxy},
	{"ha", benchHA},
	{"ha-members", benchMembers},
	{"services", benchServices},
	{"addons", benchAddons},
	{"search", benchSearch},
	{"rollback", benchRollback},
}

func main() {
	binDir := flag.String("bin-dir", "bin", "directory of the built binaries (make build)")
	run := flag.String("run", ".", "regular expression selecting scenarios by name")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := benchmark(ctx, *binDir, *run); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func benchmark(ctx context.Context, binDir, run string) error {
	filter, err := regexp.Compile(run)
	if err != nil {
		return fmt.Errorf("-run: %w", err)
	}
	abs, err := filepath.Abs(binDir)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "flotilla-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	start := time.Now()
	fmt.Printf("Flotilla benchmarks — %s, %d CPUs, %s\n", runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	for _, s := range scenarios {
		if !filter.MatchString(s.name) {
			continue
		}
		fmt.Printf("\n## %s\n", s.name)
		began := time.Now()
		if err := s.run(ctx, &env{binDir: abs, workDir: work, pprofHub: filepath.Join(work, "pprofhub", "flotilla-hub")}); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("  (%s took %s)\n", s.name, time.Since(began).Round(100*time.Millisecond))
	}
	fmt.Printf("\nAll selected scenarios took %s.\n", time.Since(start).Round(time.Second))
	return nil
}

// row prints one figure: what, value, and the target when there is one.
func row(what, value, target string) {
	if target == "" {
		fmt.Printf("  %-58s %14s\n", what, value)
		return
	}
	fmt.Printf("  %-58s %14s   (target %s)\n", what, value, target)
}

func mib(bytes int64) string { return fmt.Sprintf("%.0f MiB", float64(bytes)/(1<<20)) }

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
