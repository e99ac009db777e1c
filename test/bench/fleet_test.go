package main

import (
	"crypto/sha256"
	"os"
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
