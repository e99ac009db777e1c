package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The words every command uses for the same thing. A command that acts on
// managed clusters by name takes them as --clusters NAME[,NAME...] (the
// flag may repeat); --cluster is the same flag under its singular
// spelling, accepted everywhere and hidden from help, so that neither
// spelling is ever wrong.
const (
	ClustersFlag     = "clusters"
	ClusterFlagAlias = "cluster"
)

// AddClustersFlag adds --clusters (and its alias --cluster) to cmd, with
// the hub's cluster names as completions.
func AddClustersFlag(g *Globals, cmd *cobra.Command, p *[]string, usage string) {
	cmd.Flags().StringSliceVar(p, ClustersFlag, nil, usage)
	AliasClusterFlag(g, cmd)
}

// AliasClusterFlag makes --cluster a spelling of cmd's --clusters flag and
// completes it with the hub's cluster names.
func AliasClusterFlag(g *Globals, cmd *cobra.Command) {
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == ClusterFlagAlias {
			name = ClustersFlag
		}
		return pflag.NormalizedName(name)
	})
	_ = cmd.RegisterFlagCompletionFunc(ClustersFlag, CompleteClusterNames(g))
}

// KindsOf lists the kinds a verb command serves: its visible subcommands.
func KindsOf(verb *cobra.Command) []string {
	var kinds []string
	for _, c := range verb.Commands() {
		if c.IsAvailableCommand() {
			kinds = append(kinds, c.Name())
		}
	}
	return kinds
}

// RunKindVerb is the RunE of a verb command called without a kind it
// serves: it says which kinds there are, with a suggestion for a
// misspelled one. The list is read from the command tree, so it is never
// behind the kinds actually served.
func RunKindVerb(cmd *cobra.Command, args []string) error {
	kinds := KindsOf(cmd)
	if len(args) == 0 {
		return fmt.Errorf("name what to %s: %s KIND, where KIND is one of %s (see '%s --help')",
			cmd.Name(), cmd.CommandPath(), strings.Join(kinds, ", "), cmd.CommandPath())
	}
	// Cobra sets its default distance only on its own path to suggestions.
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	msg := fmt.Sprintf("%s does not know %q: it %s %s", cmd.CommandPath(), args[0], verbThirdPerson(cmd.Name()), orList(kinds))
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("\nDid you mean %s?", orList(quoteAll(s)))
	}
	return errors.New(msg)
}

// verbThirdPerson is "gets" for "get", "describes" for "describe".
func verbThirdPerson(verb string) string { return verb + "s" }

// orList is "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
