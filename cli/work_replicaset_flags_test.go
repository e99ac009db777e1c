package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: hello, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: hello}}
  template:
    metadata: {labels: {app: hello}}
    spec: {containers: [{name: hello, image: busybox}]}
`

// parseReplicaSetFlags runs the create work command's flag parsing on args
// and returns the ManifestWorkReplicaSet they describe.
func parseReplicaSetFlags(t *testing.T, src *workSource, args ...string) (*workv1alpha1.ManifestWorkReplicaSet, error) {
	t.Helper()
	cmd := &cobra.Command{Use: "work"}
	var rs replicaSetFlags
	rs.addFlags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	rs.changed = func(n string) bool { return cmd.Flags().Changed(n) }
	return rs.replicaSet("hello", src, "default")
}

// mustSource parses data as the -f file hello.yaml.
func mustSource(t *testing.T, data string) *workSource {
	t.Helper()
	src, err := parseWorkSource("hello.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestReplicaSetFromFlags(t *testing.T) {
	src := mustSource(t, deploymentYAML)
	rs, err := parseReplicaSetFlags(t, src, "--placement", "apps/web", "--rollout", "progressive", "--max-concurrency", "1",
		"--progress-deadline", "1m30s", "--min-success-time", "10s", "--max-failures", "25%",
		"--image", "cluster2=registry.eu/hello:1.4", "--image", "cluster3/hello=:1.5", "--image", "cluster2/side=side:2",
		"--replicas", "3", "--weight", "cluster1=2", "--weight", "cluster3=0")
	if err != nil {
		t.Fatal(err)
	}
	want := workv1alpha1.ManifestWorkReplicaSetSpec{
		ManifestWorkTemplate: src.spec,
		PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "web", RolloutStrategy: workv1alpha1.RolloutStrategy{
			Type: workv1alpha1.Progressive,
			Progressive: &workv1alpha1.RolloutProgressive{
				RolloutConfig: workv1alpha1.RolloutConfig{
					MinSuccessTime:   metav1.Duration{Duration: 10 * time.Second},
					ProgressDeadline: "90s",
					MaxFailures:      intstr.FromString("25%"),
				},
				MaxConcurrency: intstr.FromInt32(1),
			},
		}}},
		CascadeDeletionPolicy: workv1alpha1.Background,
		Overrides: []workv1alpha1.ClusterOverride{
			{Name: "image-cluster2", ClusterNames: []string{"cluster2"}, Images: []workv1alpha1.ImageOverride{
				{Image: "registry.eu/hello:1.4"}, {Container: "side", Image: "side:2"}}},
			{Name: "image-cluster3", ClusterNames: []string{"cluster3"}, Images: []workv1alpha1.ImageOverride{{Container: "hello", Tag: "1.5"}}},
		},
		ReplicaDivision: &workv1alpha1.ReplicaDivision{
			Type:          workv1alpha1.ReplicaDivisionWeighted,
			TotalReplicas: ptr.To[int32](3),
			Weights: []workv1alpha1.ClusterWeight{
				{ClusterNames: []string{"cluster1"}, Weight: 2},
				{ClusterNames: []string{"cluster3"}, Weight: 0},
			},
		},
	}
	if rs.Namespace != "apps" || rs.Name != "hello" {
		t.Errorf("object %s/%s, want apps/hello", rs.Namespace, rs.Name)
	}
	if diff := cmp.Diff(want, rs.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func TestReplicaSetDefaults(t *testing.T) {
	rs, err := parseReplicaSetFlags(t, mustSource(t, deploymentYAML), "--placement", "web", "-n", "apps")
	if err != nil {
		t.Fatal(err)
	}
	want := []workv1alpha1.LocalPlacementReference{{Name: "web", RolloutStrategy: workv1alpha1.RolloutStrategy{Type: workv1alpha1.All}}}
	if rs.Namespace != "apps" || !cmp.Equal(rs.Spec.PlacementRefs, want) || rs.Spec.ReplicaDivision != nil || rs.Spec.Overrides != nil {
		t.Errorf("got %s %+v", rs.Namespace, rs.Spec)
	}
	// --weight alone divides the manifest's own replicas.
	rs, err = parseReplicaSetFlags(t, mustSource(t, deploymentYAML), "--placement", "web", "--weight", "c1=2")
	if err != nil {
		t.Fatal(err)
	}
	if d := rs.Spec.ReplicaDivision; d == nil || d.TotalReplicas != nil || len(d.Weights) != 1 || rs.Namespace != "default" {
		t.Errorf("division %+v in %s", d, rs.Namespace)
	}
	rs, err = parseReplicaSetFlags(t, mustSource(t, deploymentYAML), "--placement", "web", "--progress-deadline", "2h")
	if err != nil {
		t.Fatal(err)
	}
	if s := rs.Spec.PlacementRefs[0].RolloutStrategy; s.Type != workv1alpha1.All || s.All == nil || s.All.ProgressDeadline != "2h" {
		t.Errorf("strategy %+v", s)
	}
}

// A ManifestWorkReplicaSet file is used as it is; flags change it.
func TestReplicaSetFromFile(t *testing.T) {
	file := `apiVersion: work.open-cluster-management.io/v1alpha1
kind: ManifestWorkReplicaSet
metadata: {name: ignored, namespace: apps, labels: {team: web}}
spec:
  placementRefs:
    - name: web
      rolloutStrategy: {type: Progressive, progressive: {maxConcurrency: 2}}
  overrides:
    - clusterSelector: {matchLabels: {region: eu-west}}
      env: [{name: REGION, value: eu}]
  replicaDivision: {totalReplicas: 4}
  manifestWorkTemplate:
    workload:
      manifests:
` + indentYAML(deploymentYAML, "        - ", "          ")
	src := mustSource(t, file)
	rs, err := parseReplicaSetFlags(t, src, "--image", "cluster1=nginx")
	if err != nil {
		t.Fatal(err)
	}
	if rs.Namespace != "apps" || rs.Labels["team"] != "web" || len(rs.Spec.PlacementRefs) != 1 ||
		rs.Spec.PlacementRefs[0].RolloutStrategy.Progressive.MaxConcurrency != intstr.FromInt32(2) {
		t.Errorf("the file's namespace, labels and placement were not kept: %s %v %+v", rs.Namespace, rs.Labels, rs.Spec.PlacementRefs)
	}
	if len(rs.Spec.Overrides) != 2 || rs.Spec.Overrides[0].Env[0].Value != "eu" || rs.Spec.Overrides[1].Name != "image-cluster1" {
		t.Errorf("overrides: %+v", rs.Spec.Overrides)
	}
	if len(rs.Spec.ManifestWorkTemplate.Workload.Manifests) != 1 {
		t.Errorf("template: %+v", rs.Spec.ManifestWorkTemplate)
	}
	// The rollout flags replace the file's strategy; --placement its Placements.
	rs, err = parseReplicaSetFlags(t, src, "--placement", "other", "--rollout", "All")
	if err != nil {
		t.Fatal(err)
	}
	if refs := rs.Spec.PlacementRefs; len(refs) != 1 || refs[0].Name != "other" || refs[0].RolloutStrategy.Type != workv1alpha1.All {
		t.Errorf("placements %+v", refs)
	}
	if _, err := parseReplicaSetFlags(t, src, "--replicas", "3"); err == nil || !strings.Contains(err.Error(), "already has a replicaDivision") {
		t.Errorf("err = %v", err)
	}
}

func TestReplicaSetFlagErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	rsFile := filepath.Join(dir, "rs.yaml")
	if err := os.WriteFile(good, []byte(deploymentYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rsFile, []byte("apiVersion: work.open-cluster-management.io/v1alpha1\nkind: ManifestWorkReplicaSet\nmetadata: {name: x}\nspec:\n  manifestWorkTemplate:\n    workload:\n      manifests:\n"+indentYAML(deploymentYAML, "        - ", "          ")), 0o600); err != nil {
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
			code := Run(context.Background(), IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
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

// indentYAML prefixes the first line of s with first and the others with rest.
func indentYAML(s, first, rest string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
