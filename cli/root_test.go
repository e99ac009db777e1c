package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/internal/version"
)

// TestFlagErrors runs commands whose flags are wrong: each must fail with
// exit code 1 and a message saying what to fix, before contacting anything.
func TestFlagErrors(t *testing.T) {
	join := []string{"join", "--hub-token", "abcdef.0123456789abcdef", "--hub-apiserver", "https://hub:6443", "--cluster-name", "c1"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"get"}, "name what to get"},
		{[]string{"get", "nodes"}, `does not know "nodes"`},
		{[]string{"get", "clusters", "-o", "table"}, `--output "table" is not supported`},
		{[]string{"init", "--token-ttl", "-1h"}, "--token-ttl -1h0m0s must be positive"},
		{[]string{"init", "--token-ttl", "soon"}, "See 'flotilla init --help'"},
		{[]string{"accept"}, "--clusters is required"},
		{[]string{"accept", "--clusters", "a,B"}, `"B" is not a valid cluster name`},
		{[]string{"accept", "--clusters", "a", "--timeout", "0s"}, "--timeout 0s must be positive"},
		{[]string{"deny", "--clusters", " "}, "--clusters is required"},
		{[]string{"join"}, "--cluster-name is required"},
		{[]string{"join", "--cluster-name", "c1"}, "--hub-token is required"},
		{[]string{"join", "--cluster-name", "c1", "--hub-token", "abcdef.0123456789abcdef"}, "--hub-apiserver is required"},
		{[]string{"join", "--cluster-name", "c1", "--hub-token", "abcdef.0123456789abcdef", "--hub-apiserver", "http://hub:6443"}, "not an https:// URL"},
		{append(join, "--run", "--wait"), "use one of them"},
		{append(join, "--run", "--image", "x"), "use one of them"},
		{[]string{"unjoin"}, "--cluster-name is required"},
		{[]string{"unjoin", "--cluster-name", "C1"}, "not a valid cluster name"},
		{[]string{"version", "-o", "wide"}, `--output "wide" is not supported`},
		{[]string{"joinn"}, `unknown command "joinn"`},
		{[]string{"rollout"}, "name what to do: flotilla rollout history|undo|pause|resume|status"},
		{[]string{"rollout", "redo", "web"}, `flotilla rollout does not know "redo"`},
		{[]string{"rollout", "undo"}, "name one ManifestWorkReplicaSet (got 0)"},
		{[]string{"rollout", "undo", "web", "--to-revision", "-1"}, "--to-revision -1: revisions are numbered from 1"},
		{[]string{"rollout", "history", "web", "-o", "wide"}, `--output "wide" is not supported`},
		{[]string{"rollout", "status", "web", "--timeout", "0s"}, "--timeout 0s must be positive"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			// An unreachable kubeconfig path proves nothing was contacted.
			args := append(tt.args, "--kubeconfig", "/nonexistent/kubeconfig")
			code := Run(context.Background(), IOStreams{Out: &out, ErrOut: &errOut}, args)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if !strings.HasPrefix(errOut.String(), "Error: ") || !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tt.want)
			}
			if strings.Contains(errOut.String(), "kubeconfig") && !strings.Contains(tt.want, "kubeconfig") {
				t.Errorf("stderr %q: the flags should have been refused before loading the kubeconfig", errOut.String())
			}
		})
	}
}

func TestVersionClientOnly(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), IOStreams{Out: &out, ErrOut: &errOut}, []string{"version", "--client"}); code != 0 {
		t.Fatalf("exit code %d: %s", code, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "Client Version: ") {
		t.Fatalf("printed %q", out.String())
	}
	// The agent image is the tag make images writes, the one join installs.
	if want := "Images: " + version.Image("flotilla-agent") + ", "; !strings.Contains(out.String(), want) {
		t.Fatalf("printed %q, want it to name the images (%q)", out.String(), want)
	}
}
