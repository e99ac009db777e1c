package dev

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

func TestDevClusterLabels(t *testing.T) {
	var got []string
	for i := range 4 {
		got = append(got, devClusterName(i)+":"+cmdutil.LabelsColumn(devClusterLabels(i)))
	}
	want := []string{
		"cluster1:env=prod,region=us-east",
		"cluster2:env=dev,region=eu-west",
		"cluster3:env=prod,region=ap-south",
		"cluster4:env=dev,region=us-east",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestParseProcStat(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
	state, start, err := parseProcStat([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if state != "S" || start != 987654 {
		t.Errorf("state %q start %d, want S 987654", state, start)
	}
	if _, _, err := parseProcStat([]byte("garbage")); err == nil {
		t.Error("garbage parsed without error")
	}
}

func TestDevProcessLifecycle(t *testing.T) {
	if !procAvailable() {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	p, err := startDetached("sleeper", "/bin/sh", filepath.Join(dir, "sleeper.log"), "-c", "echo hello; exec sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.waitForLine(context.Background(), "hello", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.alive() {
		t.Fatal("a running process is not alive")
	}
	// Another pid, or the same pid with another start time, is not the process.
	if (&devProcess{PID: p.PID, StartTime: p.StartTime + 1}).alive() {
		t.Error("a process with another start time counts as alive")
	}
	if killed := p.stop(context.Background(), 10*time.Second); killed {
		t.Error("sleep had to be killed; SIGTERM should have ended it")
	}
	if p.alive() {
		t.Error("a stopped process is alive")
	}
	if !strings.Contains(p.exitDescription(), "signal: terminated") {
		t.Errorf("exit description %q", p.exitDescription())
	}
}

func TestWaitForLineReportsExit(t *testing.T) {
	dir := t.TempDir()
	p, err := startDetached("crasher", "/bin/sh", filepath.Join(dir, "crasher.log"), "-c", "echo 'cannot listen on 127.0.0.1:1: address already in use'; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	err = p.waitForLine(context.Background(), "is ready", 10*time.Second)
	if err == nil {
		t.Fatal("no error for a process that exited")
	}
	for _, want := range []string{"crasher stopped while starting", "exit status 3", "address already in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestDevStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, err := loadDevState(dir); err != errNoDevEnv {
		t.Fatalf("empty dir: %v, want errNoDevEnv", err)
	}
	st := &devState{
		Created: time.Now().Round(time.Second),
		Hub:     devHub{URL: "https://127.0.0.1:1", Process: &devProcess{Name: "hub", PID: 1, Log: "hub.log"}},
		Clusters: []devCluster{{
			Name: "cluster1", Labels: map[string]string{"env": "prod"},
			Process: &devProcess{Name: "cluster1", PID: 2}, Agent: &devProcess{Name: "cluster1-agent", PID: 3},
		}},
	}
	if err := st.save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := loadDevState(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got.processes() {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"cluster1-agent", "cluster1", "hub"}, names); diff != "" {
		t.Errorf("stop order (-want +got):\n%s", diff)
	}
	if !got.Created.Equal(st.Created) || got.Clusters[0].Labels["env"] != "prod" {
		t.Errorf("state changed on the way: %+v", got)
	}
}

func TestDevUpPrepareDir(t *testing.T) {
	streams := cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	newOpts := func(dir string) *devUpOptions {
		return &devUpOptions{devOptions: devOptions{Globals: &cmdutil.Globals{Streams: streams}, dir: dir}}
	}

	t.Run("a directory of something else is refused", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "precious"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := newOpts(dir).prepareDir()
		if err == nil || !strings.Contains(err.Error(), "holds no dev environment") {
			t.Errorf("got %v", err)
		}
	})

	t.Run("an environment that came up is kept, for up to start what is missing", func(t *testing.T) {
		dir := t.TempDir()
		self, _ := procStartTime(os.Getpid())
		st := &devState{Ready: time.Now(), Hub: devHub{Process: &devProcess{Name: "hub", PID: os.Getpid(), StartTime: self}}}
		if err := st.save(dir); err != nil {
			t.Fatal(err)
		}
		got, err := newOpts(dir).prepareDir()
		if err != nil || got == nil || got.Hub.Process.PID != os.Getpid() {
			t.Errorf("got %+v, %v", got, err)
		}
	})

	t.Run("one that never came up and still runs is refused", func(t *testing.T) {
		dir := t.TempDir()
		self, _ := procStartTime(os.Getpid())
		st := &devState{Hub: devHub{Process: &devProcess{Name: "hub", PID: os.Getpid(), StartTime: self}}}
		if err := st.save(dir); err != nil {
			t.Fatal(err)
		}
		_, err := newOpts(dir).prepareDir()
		if err == nil || !strings.Contains(err.Error(), "still runs in "+dir) {
			t.Errorf("got %v", err)
		}
	})

	t.Run("a stopped environment is replaced", func(t *testing.T) {
		dir := t.TempDir()
		done := exec.Command("/bin/true")
		if err := done.Run(); err != nil {
			t.Fatal(err)
		}
		st := &devState{Hub: devHub{Process: &devProcess{Name: "hub", PID: done.Process.Pid}}}
		if err := st.save(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hub.log"), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if st, err := newOpts(dir).prepareDir(); err != nil || st != nil {
			t.Fatal(st, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("the stopped environment's files are still there: %v", entries)
		}
	})
}
