package create

import (
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
