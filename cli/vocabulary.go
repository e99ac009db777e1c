package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// kindVerbs are the commands whose subcommands are the kinds of object
// they act on: `flotilla get KIND`, `flotilla describe KIND`, ...
var kindVerbs = []string{"get", "create", "delete", "describe"}

// finishKindVerbs gives every verb command of root the RunE above and a
// help text that lists the kinds it serves, generated from its
// subcommands once they are all added.
func finishKindVerbs(root *cobra.Command) {
	for _, c := range root.Commands() {
		if !slices.Contains(kindVerbs, c.Name()) {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = cmdutil.RunKindVerb
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
		c.Short += ": " + strings.Join(cmdutil.KindsOf(c), ", ")
		c.Long = strings.TrimRight(c.Long, "\n") + "\n\nKinds:\n" + strings.Join(lines, "\n")
	}
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
