package create_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/cli"
	"github.com/flotilla-io/flotilla/cli/cmd/create"
)

func TestReplicaSetFlagErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	rsFile := filepath.Join(dir, "rs.yaml")
	if err := os.WriteFile(good, []byte(create.DeploymentYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rsFile, []byte("apiVersion: work.open-cluster-management.io/v1alpha1\nkind: ManifestWorkReplicaSet\nmetadata: {name: x}\nspec:\n  manifestWorkTemplate:\n    workload:\n      manifests:\n"+create.IndentYAML(create.DeploymentYAML, "        - ", "          ")), 0o600); err != nil {
		t.Fatal(err)
	}
	w := []string{"create", "work", "w", "-f", good}
	p := append(append([]string{}, w...), "--placement", "apps/web")
	tests := []struct {
		args []string
		want string
	}{
		{append(append([]string{}, p...), "--clusters", "c1"), "--clusters and --placement exclude each other"},
		{append(append([]string{}, w...), "--clusters", "c1", "--image", "c1=nginx"), "--image only apply to a ManifestWorkReplicaSet: add --placement"},
		{append(append([]string{}, w...), "--clusters", "c1", "--rollout", "All", "--replicas", "2"), "--replicas, --rollout only apply to a ManifestWorkReplicaSet"},
		{[]string{"create", "work", "w", "-f", rsFile, "--clusters", "c1"}, "holds a ManifestWorkReplicaSet, which goes to the clusters of a Placement: use --placement instead of --clusters"},
		{[]string{"create", "work", "w", "-f", rsFile}, "--placement is required"},
		{append(append([]string{}, p...), "-n", "other"), "--placement apps/web is in namespace apps, but -n says other"},
		{append(append([]string{}, p...), "--rollout", "Canary"), `--rollout "Canary" is not a rollout strategy: use All, Progressive or ProgressivePerGroup`},
		{append(append([]string{}, p...), "--max-concurrency", "1"), "--max-concurrency only applies to --rollout Progressive (All rolls out to every cluster at once)"},
		{append(append([]string{}, p...), "--rollout", "ProgressivePerGroup", "--max-concurrency", "1"), "--max-concurrency only applies to --rollout Progressive (ProgressivePerGroup rolls out one decision group at a time)"},
		{append(append([]string{}, p...), "--max-failures", "1"), "--max-failures only apply to a progressive rollout: add --rollout Progressive"},
		{append(append([]string{}, p...), "--min-success-time", "1m", "--max-failures", "1"), "--min-success-time and --max-failures only apply to a progressive rollout"},
		{append(append([]string{}, p...), "--rollout", "Progressive", "--max-concurrency", "0"), "--max-concurrency 0 must be at least 1"},
		{append(append([]string{}, p...), "--rollout", "Progressive", "--max-concurrency", "101%"), `--max-concurrency "101%" is neither a number of clusters (e.g. 2) nor a percentage from 0% to 100% (e.g. 25%)`},
		{append(append([]string{}, p...), "--rollout", "Progressive", "--max-failures", "two"), `--max-failures "two" is neither a number of clusters`},
		{append(append([]string{}, p...), "--rollout", "Progressive", "--min-success-time", "-1s"), "--min-success-time -1s is negative"},
		{append(append([]string{}, p...), "--progress-deadline", "soon"), `--progress-deadline "soon" is neither a positive duration (e.g. 90s, 10m, 2h) nor None`},
		{append(append([]string{}, p...), "--progress-deadline", "1500ms"), "--progress-deadline 1500ms: give whole seconds"},
		{append(append([]string{}, p...), "--image", "nginx"), `--image "nginx": write CLUSTER=IMAGE or CLUSTER/CONTAINER=IMAGE`},
		{append(append([]string{}, p...), "--image", "Cluster1=nginx"), `--image "Cluster1=nginx": "Cluster1" is not a valid cluster name`},
		{append(append([]string{}, p...), "--image", "c1=:"), "the tag after : is empty"},
		{append(append([]string{}, p...), "--image", "c1=a", "--image", "c1=b"), "given twice for the same container of cluster c1"},
		{append(append([]string{}, p...), "--weight", "c1"), `--weight "c1": write CLUSTER=WEIGHT`},
		{append(append([]string{}, p...), "--weight", "c1=-1"), `the weight "-1" is not a whole number of 0 or more`},
		{append(append([]string{}, p...), "--weight", "c1=1", "--weight", "c1=2"), "cluster c1 was given a weight twice"},
		{append(append([]string{}, p...), "--replicas", "-1"), "--replicas -1 is negative"},
		{[]string{"create", "work", "Bad_Name", "-f", good, "--placement", "web"}, `"Bad_Name" is not a valid ManifestWorkReplicaSet name`},
		{[]string{"describe", "work", "w", "-n", "apps", "--clusters", "c1"}, "-n and --clusters exclude each other"},
		{[]string{"get", "works", "--replicasets", "--cluster", "c1"}, "--clusters and --replicasets exclude each other"},
		{[]string{"delete", "work", "w", "--cluster", "c1", "-n", "apps"}, "--clusters and -n exclude each other"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append(tt.args, "--kubeconfig", "/nonexistent/kubeconfig")
			code := cli.Run(context.Background(), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tt.want)
			}
			if strings.Contains(errOut.String(), "/nonexistent/kubeconfig") {
				t.Errorf("stderr %q: the flags should have been refused before loading the kubeconfig", errOut.String())
			}
		})
	}
}

// TestWorkFlagErrors runs work commands with wrong flags or files: each
// must fail with a message saying what to fix, before contacting anything.
func TestWorkFlagErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"create"}, "name what to create"},
		{[]string{"create", "work"}, "name the work"},
		{[]string{"create", "work", "Bad_Name", "-f", good, "--clusters", "c1"}, `"Bad_Name" is not a valid ManifestWork name`},
		{[]string{"create", "work", "w", "-f", good}, "--clusters or --placement is required"},
		{[]string{"create", "work", "w", "--clusters", "c1"}, "-f is required"},
		{[]string{"create", "work", "w", "-f", filepath.Join(dir, "missing.yaml"), "--clusters", "c1"}, "cannot read -f " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
		{[]string{"create", "work", "w", "-f", dir, "--clusters", "c1"}, "is a directory"},
		{[]string{"get", "works", "a", "b"}, "name at most one ManifestWork"},
		{[]string{"get", "works", "--cluster", "C1"}, "not a valid cluster name"},
		{[]string{"get", "works", "-o", "name"}, `--output "name" is not supported`},
		{[]string{"delete"}, "name what to delete"},
		{[]string{"delete", "work", "w"}, "--clusters is required"},
		{[]string{"delete", "work", "w", "--cluster", "c1", "--timeout", "0s"}, "--timeout 0s must be positive"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append(tt.args, "--kubeconfig", "/nonexistent/kubeconfig")
			code := cli.Run(context.Background(), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if !strings.HasPrefix(errOut.String(), "Error: ") || !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tt.want)
			}
			if strings.Contains(errOut.String(), "/nonexistent/kubeconfig") {
				t.Errorf("stderr %q: the flags should have been refused before loading the kubeconfig", errOut.String())
			}
		})
	}
}
