package cli

import (
	"errors"
	"fmt"
	"slices"
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
	clustersFlag     = "clusters"
	clusterFlagAlias = "cluster"
)

// addClustersFlag adds --clusters (and its alias --cluster) to cmd, with
// the hub's cluster names as completions.
func addClustersFlag(g *globalOptions, cmd *cobra.Command, p *[]string, usage string) {
	cmd.Flags().StringSliceVar(p, clustersFlag, nil, usage)
	aliasClusterFlag(g, cmd)
}

// aliasClusterFlag makes --cluster a spelling of cmd's --clusters flag and
// completes it with the hub's cluster names.
func aliasClusterFlag(g *globalOptions, cmd *cobra.Command) {
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == clusterFlagAlias {
			name = clustersFlag
		}
		return pflag.NormalizedName(name)
	})
	_ = cmd.RegisterFlagCompletionFunc(clustersFlag, completeClusterNames(g))
}

// kindVerbs are the commands whose subcommands are the kinds of object
// they act on: `flotilla get KIND`, `flotilla describe KIND`, ...
var kindVerbs = []string{"get", "create", "delete", "describe"}

// kindsOf lists the kinds a verb command serves: its visible subcommands.
func kindsOf(verb *cobra.Command) []string {
	var kinds []string
	for _, c := range verb.Commands() {
		if c.IsAvailableCommand() {
			kinds = append(kinds, c.Name())
		}
	}
	return kinds
}

// runKindVerb is the RunE of a verb command called without a kind it
// serves: it says which kinds there are, with a suggestion for a
// misspelled one. The list is read from the command tree, so it is never
// behind the kinds actually served.
func runKindVerb(cmd *cobra.Command, args []string) error {
	kinds := kindsOf(cmd)
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

// finishKindVerbs gives every verb command of root the RunE above and a
// help text that lists the kinds it serves, generated from its
// subcommands once they are all added.
func finishKindVerbs(root *cobra.Command) {
	for _, c := range root.Commands() {
		if !slices.Contains(kindVerbs, c.Name()) {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = runKindVerb
		var lines []string
		for _, k := range c.Commands() {
			if !k.IsAvailableCommand() {
				continue
			}
			names := k.Name()
			if len(k.Aliases) > 0 {
				names += " (" + strings.Join(k.Aliases, ", ") + ")"
			}
			lines = append(lines, fmt.Sprintf("  %s\n      %s", names, k.Short))
		}
		c.Short += ": " + strings.Join(kindsOf(c), ", ")
		c.Long = strings.TrimRight(c.Long, "\n") + "\n\nKinds:\n" + strings.Join(lines, "\n")
	}
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

// addExamplesToGenerated creates cobra's own help and completion commands
// now rather than at execution, so that they too carry examples.
func addExamplesToGenerated(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	examples := map[string]string{
		"help": `  flotilla help get
  flotilla help create work`,
		"completion": `  # Complete flotilla commands, flags and the hub's object names in bash:
  source <(flotilla completion bash)
  flotilla completion zsh > "${fpath[1]}/_flotilla"`,
		"bash":       `  source <(flotilla completion bash)`,
		"zsh":        `  flotilla completion zsh > "${fpath[1]}/_flotilla"`,
		"fish":       `  flotilla completion fish > ~/.config/fish/completions/flotilla.fish`,
		"powershell": `  flotilla completion powershell | Out-String | Invoke-Expression`,
	}
	for _, c := range root.Commands() {
		if c.Name() != "help" && c.Name() != "completion" {
			continue
		}
		c.Example = examples[c.Name()]
		for _, sub := range c.Commands() {
			sub.Example = examples[sub.Name()]
		}
	}
}
