package main

import (
	"crypto/sha256"
	"os"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// TestCPUTime checks that the /proc/<pid>/stat reading follows this
// process's own CPU use.
func TestCPUTime(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the kernel's tick-granular counter has moved.
	sum := sha256.Sum256(nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		for range 100000 {
			sum = sha256.Sum256(sum[:])
		}
		after, err := cpuTime(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after > before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time stayed at %s after 5 s of hashing", before)
		}
	}
}

// TestIdlePolicies checks that the 50 policies are the example policy
// with names and namespaces of their own.
func TestIdlePolicies(t *testing.T) {
	if _, err := os.Stat(examplePolicy); err != nil {
		t.Skipf("the example policy is not here: %v", err)
	}
	file, err := idlePolicies(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(b), "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("got %d documents, want 3", len(docs))
	}
	for i, want := range []string{"idle-00", "idle-01", "idle-02"} {
		for _, line := range []string{"name: " + want + "\n", "name: " + want + "-example\n"} {
			if !strings.Contains(docs[i], line) {
				t.Errorf("document %d lacks %q", i, line)
			}
		}
		if strings.Contains(docs[i], "name: prod\n") || strings.Contains(docs[i], "name: policy-namespace\n") {
			t.Errorf("document %d still names the example's policy or namespace", i)
		}
	}
}

// TestMemStat reads this process's own heap profile in the text form the
// hub's pprof server gives.
func TestMemStat(t *testing.T) {
	var b strings.Builder
	if err := pprof.Lookup("heap").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"HeapInuse", "Stack"} {
		n, err := memStat(b.String(), name)
		if err != nil {
			t.Fatal(err)
		}
		if n <= 0 {
			t.Errorf("%s = %d, want more than 0", name, n)
		}
	}
	if _, err := memStat(b.String(), "NoSuchStat"); err == nil {
		t.Error("memStat found NoSuchStat")
	}
}

// TestSamples reads the samples of one metric, labels and all, and no
// other metric's.
func TestSamples(t *testing.T) {
	body := `# HELP watch_cache_capacity [ALPHA] Total capacity of watch cache broken by resource type.
# TYPE watch_cache_capacity gauge
watch_cache_capacity{group="",resource="namespaces"} 1600
watch_cache_capacity{group="work.open-cluster-management.io",resource="manifestworks"} 25600
watch_cache_capacity_other{resource="pods"} 7
apiserver_watch_cache_events_received_total{group="work.open-cluster-management.io",resource="manifestworks"} 33015
`
	got := map[string]float64{}
	for l, v := range samples(body, "watch_cache_capacity") {
		got[l["group"]+"/"+l["resource"]] = v
	}
	want := map[string]float64{"/namespaces": 1600, "work.open-cluster-management.io/manifestworks": 25600}
	if len(got) != len(want) {
		t.Fatalf("samples = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("samples[%s] = %v, want %v", k, got[k], v)
		}
	}
}
