package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
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
		plural, singular := c.Flags().Lookup(cmdutil.ClustersFlag), c.Flags().Lookup(cmdutil.ClusterFlagAlias)
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
		if _, ok := c.GetFlagCompletionFunc(cmdutil.ClusterFlagAlias); !ok {
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
		if got, _ := c.Flags().GetStringSlice(cmdutil.ClustersFlag); strings.Join(got, ",") != "a,b,c" {
			t.Errorf("%s: --cluster a --clusters b,c gave %v", c.CommandPath(), got)
		}
	})
	for _, want := range []string{"flotilla accept", "flotilla deny", "flotilla get works", "flotilla create work", "flotilla delete work", "flotilla describe work", "flotilla clusterset set", "flotilla get serviceexports", "flotilla get serviceimports", "flotilla describe serviceexport"} {
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
	for _, kind := range cmdutil.KindsOf(get) {
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
	if len(cmdutil.KindsOf(describe)) < 5 {
		t.Errorf("describe serves %v", cmdutil.KindsOf(describe))
	}
}

// TestKindVerbsSayTheirKinds: help and errors list the kinds served, and
// a misspelled kind gets a suggestion.
func TestKindVerbsSayTheirKinds(t *testing.T) {
	root := NewRootCommand(IOStreams{})
	for _, verb := range kindVerbs {
		c, _, _ := root.Find([]string{verb})
		for _, kind := range cmdutil.KindsOf(c) {
			if !strings.Contains(c.Long, "\n  "+kind) || !strings.Contains(c.Short, kind) {
				t.Errorf("help of %s does not list %s", verb, kind)
			}
		}
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"get"}, []string{"name what to get", "clusters", "works", "placements", "policies", "clustersets", "serviceexports", "serviceimports", "token"}},
		{[]string{"get", "wroks"}, []string{`does not know "wroks"`, `Did you mean "works"?`}},
		{[]string{"get", "placemnts"}, []string{`Did you mean "placements"?`}},
		{[]string{"describe", "clustr", "x"}, []string{`Did you mean "cluster"`}},
		{[]string{"describe", "nodes"}, []string{`does not know "nodes"`, "cluster, clusterset, placement, policy, serviceexport, serviceimport or work"}},
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
	cmdutil.AddClustersFlag(&cmdutil.Globals{}, cmd, &got, "names")
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != cmdutil.ClustersFlag {
			t.Errorf("flag %s", f.Name)
		}
	})
}
