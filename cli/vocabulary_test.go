package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// walk calls f for cmd and every command below it.
func walk(cmd *cobra.Command, f func(*cobra.Command)) {
	f(cmd)
	for _, c := range cmd.Commands() {
		walk(c, f)
	}
}

func TestEveryCommandHasAnExample(t *testing.T) {
	walk(NewRootCommand(IOStreams{}), func(c *cobra.Command) {
		if c.Example == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
	})
}

// TestClustersFlagIsOneVocabulary: every command that takes managed
// clusters by name takes them as --clusters NAME[,NAME...] and as
// --cluster, the same flag, both completed with the hub's cluster names.
func TestClustersFlagIsOneVocabulary(t *testing.T) {
	root := NewRootCommand(IOStreams{})
	var takers []string
	walk(root, func(c *cobra.Command) {
		// dev up's --clusters is how many clusters to start, not their names.
		if strings.HasPrefix(c.CommandPath(), "flotilla dev") {
			return
		}
		plural, singular := c.Flags().Lookup(clustersFlag), c.Flags().Lookup(clusterFlagAlias)
		if plural == nil && singular == nil {
			return
		}
		takers = append(takers, c.CommandPath())
		if plural == nil || singular == nil || plural != singular {
			t.Errorf("%s: --clusters and --cluster are not the same flag", c.CommandPath())
			return
		}
		if plural.Value.Type() != "stringSlice" {
			t.Errorf("%s: --clusters is a %s, want a list of names", c.CommandPath(), plural.Value.Type())
		}
		if _, ok := c.GetFlagCompletionFunc(clusterFlagAlias); !ok {
			t.Errorf("%s: --cluster does not complete cluster names", c.CommandPath())
		}
		if strings.Contains(c.Flags().FlagUsages(), "--cluster ") {
			t.Errorf("%s: help shows --cluster; it is the hidden spelling of --clusters", c.CommandPath())
		}
		// Both spellings, repeated or comma separated, add up.
		if err := c.Flags().Parse([]string{"--cluster", "a", "--clusters", "b,c"}); err != nil {
			t.Errorf("%s: %v", c.CommandPath(), err)
			return
		}
		if got, _ := c.Flags().GetStringSlice(clustersFlag); strings.Join(got, ",") != "a,b,c" {
			t.Errorf("%s: --cluster a --clusters b,c gave %v", c.CommandPath(), got)
		}
	})
	for _, want := range []string{"flotilla accept", "flotilla deny", "flotilla get works", "flotilla create work", "flotilla delete work", "flotilla describe work", "flotilla clusterset set"} {
		if !strings.Contains(strings.Join(takers, "\n")+"\n", want+"\n") {
			t.Errorf("%s takes no --clusters", want)
		}
	}
}

// TestEveryKindGetListsHasDescribe: each kind of object `get` shows can be
// described; the join token is not an object but a command to paste.
func TestEveryKindGetListsHasDescribe(t *testing.T) {
	root := NewRootCommand(IOStreams{})
	get, _, _ := root.Find([]string{"get"})
	describe, _, _ := root.Find([]string{"describe"})
	for _, kind := range kindsOf(get) {
		if kind == "token" {
			continue
		}
		// describe names a kind in the singular; get in the plural.
		singular := strings.TrimSuffix(kind, "s")
		if strings.HasSuffix(kind, "ies") {
			singular = strings.TrimSuffix(kind, "ies") + "y"
		}
		c, _, err := root.Find([]string{"describe", singular})
		if err != nil || c == describe {
			t.Errorf("get %s has no describe %s", kind, singular)
		}
	}
	if len(kindsOf(describe)) < 5 {
		t.Errorf("describe serves %v", kindsOf(describe))
	}
}

// TestKindVerbsSayTheirKinds: help and errors list the kinds served, and
// a misspelled kind gets a suggestion.
func TestKindVerbsSayTheirKinds(t *testing.T) {
	root := NewRootCommand(IOStreams{})
	for _, verb := range kindVerbs {
		c, _, _ := root.Find([]string{verb})
		for _, kind := range kindsOf(c) {
			if !strings.Contains(c.Long, "\n  "+kind) || !strings.Contains(c.Short, kind) {
				t.Errorf("help of %s does not list %s", verb, kind)
			}
		}
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"get"}, []string{"name what to get", "clusters", "works", "placements", "policies", "clustersets", "token"}},
		{[]string{"get", "wroks"}, []string{`does not know "wroks"`, `Did you mean "works"?`}},
		{[]string{"get", "placemnts"}, []string{`Did you mean "placements"?`}},
		{[]string{"describe", "clustr", "x"}, []string{`Did you mean "cluster"`}},
		{[]string{"describe", "nodes"}, []string{`does not know "nodes"`, "cluster, clusterset, placement, policy or work"}},
		{[]string{"delete"}, []string{"name what to delete", "work"}},
	} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), IOStreams{Out: &out, ErrOut: &errOut}, append(tt.args, "--kubeconfig", "/nonexistent")); code != 1 {
			t.Errorf("%v: exit code %d", tt.args, code)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("%v: %q does not say %q", tt.args, errOut.String(), w)
			}
		}
	}
}

// TestFlagAliasHiddenFromUsage checks the alias machinery on a bare flag set.
func TestFlagAliasHiddenFromUsage(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	var got []string
	addClustersFlag(&globalOptions{}, cmd, &got, "names")
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != clustersFlag {
			t.Errorf("flag %s", f.Name)
		}
	})
}

// TestPendingClusterShowsWhatItsWorkHolds: in a stopped rollout, a cluster
// still Pending runs the previous spec; describe shows that one's image
// and says which it gets next.
func TestPendingClusterShowsWhatItsWorkHolds(t *testing.T) {
	now := time.Now()
	deploy := func(image string) workv1.ManifestWorkSpec {
		return specOf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"` + image + `"}]}}}}`)
	}
	rs := replicaSetOf(workv1alpha1.RolloutStrategy{Type: workv1alpha1.Progressive, Progressive: &workv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}},
		metav1.Condition{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonAsExpected, ObservedGeneration: 2})
	rs.Spec.ManifestWorkTemplate = deploy("web:2")
	works := []workv1.ManifestWork{
		workIn("c1", deploy("web:2"), now.Add(-time.Minute), metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionTrue),
		workIn("c2", deploy("web:1"), now.Add(-time.Hour), metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse),
	}
	v := buildReplicaSetView(rs, []string{"c1", "c2", "c3"}, map[string]string{"c1": "web", "c2": "web", "c3": "web"}, nil, works, now)
	var out bytes.Buffer
	if err := writeReplicaSetDescription(&out, v); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	if l := lines["c1"]; !strings.Contains(l, "Failed") || !strings.Contains(l, "web:2") {
		t.Errorf("c1: %q", l)
	}
	if l := lines["c2"]; !strings.Contains(l, "Pending") || !strings.Contains(l, " web:1 ") || !strings.Contains(l, "next: replicas 2, images web:2") {
		t.Errorf("c2 holds web:1 and gets web:2 next: %q", l)
	}
	if l := lines["c3"]; !strings.Contains(l, "Pending") || !strings.Contains(l, "next: replicas 2, images web:2") {
		t.Errorf("c3 has no work yet: %q", l)
	}
	for _, cd := range v.data().Clusters {
		if cd.Cluster == "c2" && cd.Images != "web:1" {
			t.Errorf("data: c2 images %q, want web:1", cd.Images)
		}
	}
}
