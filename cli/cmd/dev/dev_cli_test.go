package dev_test

import (
	"bytes"
	"context"
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
