package dev

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSandboxProcessesAreKnownByWhatTheyAre(t *testing.T) {
	dir := "/tmp/sb"
	hub := &devProcess{Name: "hub", Args: []string{"/bin/flotilla-hub", "--data-dir", dir + "/hub", "--secure-port", "0"}}
	agent := &devProcess{Name: "cluster1-agent", Args: []string{"/bin/flotilla", "join", "--run", "--kubeconfig", dir + "/cluster1/admin.kubeconfig"}}
	for _, tc := range []struct {
		args          []string
		sandbox       bool
		isHub, isAgnt bool
	}{
		{[]string{"/other/flotilla-hub", "--data-dir", dir + "/hub", "--secure-port", "41234"}, true, true, false},
		{[]string{"flotilla-hub", "--data-dir=" + dir + "/hub"}, true, true, false},
		{[]string{"flotilla-hub", "--data-dir", "/tmp/sb2/hub"}, false, false, false},
		{[]string{"flotilla-dev-cluster", "--data-dir", dir + "/cluster1"}, true, false, false},
		{[]string{"./flotilla", "join", "--run", "--kubeconfig", dir + "/cluster1/admin.kubeconfig"}, true, false, true},
		{[]string{"flotilla", "dev", "down", "--dir", dir}, false, false, false},
		{[]string{"flotilla", "get", "clusters", "--kubeconfig", dir + "/hub/admin.kubeconfig"}, false, false, false},
		{[]string{"vim", dir + "/hub.log"}, false, false, false},
	} {
		q := procProcess{PID: 1, Args: tc.args}
		if got := isSandboxProcess(dir, q); got != tc.sandbox {
			t.Errorf("%v: sandbox process %t, want %t", tc.args, got, tc.sandbox)
		}
		if got := hub.isPieceProcess(dir, q); got != tc.isHub {
			t.Errorf("%v: the hub %t, want %t", tc.args, got, tc.isHub)
		}
		if got := agent.isPieceProcess(dir, q); got != tc.isAgnt {
			t.Errorf("%v: the agent %t, want %t", tc.args, got, tc.isAgnt)
		}
	}
}

// TestRestartedPieceReadsItsOwnLog: a piece started again with the same
// log reads only the address it printed itself.
func TestRestartedPieceReadsItsOwnLog(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "hub.log")
	if err := os.WriteFile(logPath, []byte("flotilla-hub is ready at https://127.0.0.1:1111\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "flotilla-hub")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'flotilla-hub is ready at https://127.0.0.1:2222'\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := startDetached("hub", script, logPath, "--data-dir", filepath.Join(dir, "hub"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(t.Context(), 5*time.Second) })
	url := ""
	deadline := time.Now().Add(10 * time.Second)
	for url == "" && time.Now().Before(deadline) {
		url, _ = p.readyURL(hubReadyLine)
		time.Sleep(50 * time.Millisecond)
	}
	if url != "https://127.0.0.1:2222" {
		t.Fatalf("read %q, want the address of this start", url)
	}

}
