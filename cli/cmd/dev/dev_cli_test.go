package dev_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/cli"
)

func TestDevFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"dev", "up", "--clusters", "0"}, "--clusters 0: choose 1 to 20 clusters"},
		{[]string{"dev", "up", "--clusters", "21"}, "choose 1 to 20"},
		{[]string{"dev", "up", "--nodes", "0"}, "at least one node"},
		{[]string{"dev", "up", "--node-cpu", "lots"}, `--node-cpu "lots" is not a positive quantity`},
		{[]string{"dev", "up", "--node-memory", "-1Gi"}, `--node-memory "-1Gi" is not a positive quantity`},
		{[]string{"dev", "up", "--timeout", "0s"}, "--timeout 0s must be positive"},
		{[]string{"dev", "down", "--grace", "0s"}, "--grace 0s must be positive"},
		{[]string{"dev", "up", "extra"}, `unknown command "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append(tt.args, "--dir", filepath.Join(t.TempDir(), "dev"))
			if code := cli.Run(context.Background(), cli.IOStreams{Out: &out, ErrOut: &errOut}, args); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tt.want)
			}
		})
	}
}

func TestDevDownWithoutEnvironment(t *testing.T) {
	var out, errOut bytes.Buffer
	dir := filepath.Join(t.TempDir(), "none")
	if code := cli.Run(context.Background(), cli.IOStreams{Out: &out, ErrOut: &errOut}, []string{"dev", "down", "--dir", dir}); code != 0 {
		t.Fatalf("exit code %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "nothing to stop") {
		t.Errorf("stderr %q", errOut.String())
	}
	// A directory that is not a dev environment is left alone.
	foreign := t.TempDir()
	errOut.Reset()
	if code := cli.Run(context.Background(), cli.IOStreams{Out: &out, ErrOut: &errOut}, []string{"dev", "down", "--dir", foreign}); code != 1 {
		t.Fatalf("exit code %d for a foreign directory", code)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("the foreign directory was touched: %v", err)
	}
}

// TestStatusAndRestartFindTheEnvironmentOfTheKubeconfig: without --dir,
// dev status and dev restart work on the dev environment that the
// kubeconfig belongs to (make demo's .demo after export KUBECONFIG=...),
// say so, and fall back to the default; --dir wins.
func TestStatusAndRestartFindTheEnvironmentOfTheKubeconfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	demo := filepath.Join(t.TempDir(), ".demo")
	hubKubeconfig := filepath.Join(demo, "hub", "admin.kubeconfig")
	clusterKubeconfig := filepath.Join(demo, "cluster1", "admin.kubeconfig")
	for _, f := range []string{hubKubeconfig, clusterKubeconfig} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	state := fmt.Sprintf(`{"created": "2026-12-03T10:00:00Z", "hub": {"url": "https://127.0.0.1:1", "kubeconfig": %q},
		"clusters": [{"name": "cluster1", "url": "https://127.0.0.1:2", "kubeconfig": %q}]}`, hubKubeconfig, clusterKubeconfig)
	if err := os.WriteFile(filepath.Join(demo, "state.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	defaultDir := filepath.Join(home, ".flotilla", "dev")
	found := "Using the dev environment in " + demo + ", which KUBECONFIG points into"
	tests := []struct {
		name       string
		kubeconfig string
		args       []string
		wantOut    string
		wantErr    []string
	}{
		{name: "status, KUBECONFIG of the hub", kubeconfig: hubKubeconfig, args: []string{"dev", "status"},
			wantOut: "Dev environment in " + demo + ", started", wantErr: []string{found}},
		{name: "status, KUBECONFIG of a cluster, among others", kubeconfig: filepath.Join(other, "x") + string(filepath.ListSeparator) + clusterKubeconfig, args: []string{"dev", "status"},
			wantOut: "Dev environment in " + demo + ", started", wantErr: []string{found}},
		{name: "status, --kubeconfig", args: []string{"dev", "status", "--kubeconfig", hubKubeconfig},
			wantOut: "Dev environment in " + demo + ", started", wantErr: []string{"Using the dev environment in " + demo + ", which --kubeconfig points into"}},
		{name: "status, a kubeconfig of no dev environment", kubeconfig: filepath.Join(other, "x"), args: []string{"dev", "status"},
			wantErr: []string{"Using the dev environment in " + defaultDir + ", the default", "No dev environment in " + defaultDir}},
		{name: "status, --dir wins", kubeconfig: hubKubeconfig, args: []string{"dev", "status", "--dir", other},
			wantErr: []string{"No dev environment in " + other + ": start one with `flotilla dev up --dir " + other + "`"}},
		{name: "restart, KUBECONFIG of the hub", kubeconfig: hubKubeconfig, args: []string{"dev", "restart", "cluster1"},
			wantErr: []string{found, "the dev environment in " + demo + " never came up completely: start it afresh with `flotilla dev down --dir " + demo + " && flotilla dev up --dir " + demo + "`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.kubeconfig)
			var out, errOut bytes.Buffer
			cli.Run(context.Background(), cli.IOStreams{Out: &out, ErrOut: &errOut}, tt.args)
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("stdout %q does not say %q", out.String(), tt.wantOut)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(errOut.String(), want) {
					t.Errorf("stderr %q does not say %q", errOut.String(), want)
				}
			}
		})
	}
}
