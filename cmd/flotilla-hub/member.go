package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/hub/members"
)

func newMemberCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "member",
		Short: "List, add and remove the etcd members of a hub of several processes",
		Long: `List, add and remove the members of the etcd cluster that the embedded etcds
of several flotilla-hub processes form (--etcd-initial-cluster), while it runs:
to replace a member whose machine or disk is lost, or to grow or shrink the
cluster. Each command talks to the etcd member of the hub running on this
machine with --data-dir. See docs/ha.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newMemberListCommand(), newMemberAddCommand(), newMemberRemoveCommand())
	return cmd
}

func newMemberListCommand() *cobra.Command {
	var dataDir, output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the etcd members: started, learner, leader, answering",
		Long: `List the members of the etcd cluster as the member of the hub running on
--data-dir knows them: name, ID, peer and client URLs, whether each has
started (once), is a learner (added, not voting yet), is the raft leader,
and answers on its peer URL now. A member that started once but does not
answer is down or cut off.`,
		Example: `  flotilla-hub member list --data-dir /var/lib/flotilla/hub
  flotilla-hub member list --data-dir /var/lib/flotilla/hub -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list := func(ctx context.Context, c *members.Cluster) ([]members.Member, error) { return c.List(ctx) }
			return onMembers(cmd, dataDir, output, "table", list, members.WriteTable)
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir(), "the --data-dir of a hub running on this machine")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return cmd
}

func newMemberAddCommand() *cobra.Command {
	var dataDir, output, peerURL string
	cmd := &cobra.Command{
		Use:   "add NAME --peer-url https://HOST:PORT",
		Short: "Add a member to the etcd cluster, and print how to start it",
		Long: `Add a member named NAME, which the other members reach at --peer-url, to the
etcd cluster, as a learner: it receives the data but does not vote until it
has caught up, so the cluster keeps its tolerance to a lost member while the
new one starts (or if it never does). Its hub promotes it to a voting member
once it has caught up, then starts serving.

Refused while a voting member does not answer (etcd adds a member only while
all its voting members are connected: remove a lost member first), when the
name or the peer URL is taken, or while an added member has not started.

Then prints what to do on the new machine: the CA and keys to copy there, and
the flotilla-hub flags, with --etcd-initial-cluster listing every member and
--etcd-initial-cluster-state existing. -o json or yaml gives the same as data.`,
		Example: `  # Replace hub-3, whose machine is lost, with hub-4 on 192.0.2.14:
  flotilla-hub member remove hub-3 --data-dir /var/lib/flotilla/hub
  flotilla-hub member add hub-4 --peer-url https://192.0.2.14:2380 --data-dir /var/lib/flotilla/hub

  # The same, as data for a script:
  flotilla-hub member add hub-4 --peer-url https://192.0.2.14:2380 -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("give the new member's name (its --etcd-name), e.g. flotilla-hub member add hub-4 --peer-url https://192.0.2.14:2380")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			add := func(ctx context.Context, c *members.Cluster) (members.JoinInstructions, error) {
				return c.Add(ctx, args[0], peerURL)
			}
			return onMembers(cmd, dataDir, output, "text", add, writeText[members.JoinInstructions])
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir(), "the --data-dir of a hub running on this machine (also the new member's, in the printed flags)")
	cmd.Flags().StringVar(&peerURL, "peer-url", "", "https://address:port at which the other members will reach the new one (its --etcd-peer-url)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	return cmd
}

func newMemberRemoveCommand() *cobra.Command {
	var dataDir, output string
	cmd := &cobra.Command{
		Use:   "remove NAME|ID",
		Short: "Remove a member from the etcd cluster",
		Long: `Remove the member named NAME (or with the ID that member list shows) from the
etcd cluster. Refused for the last voting member, and when the voting
members that would remain and answer are not a majority of those remaining
(the cluster would stop serving).

The removed member's process, if it still runs, stops serving: its etcd
leaves the cluster and its hub exits. Its data directory belongs to the old
cluster: empty it before the machine rejoins with member add.`,
		Example: `  flotilla-hub member remove hub-3 --data-dir /var/lib/flotilla/hub
  # A member that was added but never started has no name yet: use its ID.
  flotilla-hub member remove 8e9e05c52164694d`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("give the name or ID of the member to remove (flotilla-hub member list shows them)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			remove := func(ctx context.Context, c *members.Cluster) (members.Removal, error) {
				return c.Remove(ctx, args[0])
			}
			return onMembers(cmd, dataDir, output, "text", remove, writeText[members.Removal])
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir(), "the --data-dir of a hub running on this machine")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	return cmd
}

// onMembers checks -o, connects to the etcd of the hub running on
// dataDir, runs do and prints its result: with write in the command's own
// format human, else as JSON or YAML.
func onMembers[T any](cmd *cobra.Command, dataDir, output, human string, do func(context.Context, *members.Cluster) (T, error), write func(io.Writer, T) error) error {
	if err := checkOutput(output, human); err != nil {
		return err
	}
	c, err := members.Connect(cmd.Context(), dataDir)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := do(cmd.Context(), c)
	if err != nil {
		return err
	}
	if output == human {
		return write(cmd.OutOrStdout(), v)
	}
	return writeData(cmd.OutOrStdout(), output, v)
}

// writeText prints v's own text form.
func writeText[T interface{ WriteText(io.Writer) }](w io.Writer, v T) error {
	v.WriteText(w)
	return nil
}

// checkOutput accepts human (the command's own format), json and yaml.
func checkOutput(output, human string) error {
	switch output {
	case human, "json", "yaml":
		return nil
	}
	return fmt.Errorf("-o %q: want %s, json or yaml", output, human)
}

// writeData prints v as JSON or YAML.
func writeData(w io.Writer, output string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if output == "yaml" {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
