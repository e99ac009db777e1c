package rollout

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

type historyOptions struct {
	target
	revision int64
	output   string
}

func newHistoryCommand(g *cmdutil.Globals) *cobra.Command {
	o := &historyOptions{target: target{Globals: g}}
	cmd := &cobra.Command{
		Use:   "history NAME [-n NAMESPACE] [--revision N]",
		Short: "List the revisions of a ManifestWorkReplicaSet",
		Long: `List the revisions the hub keeps of ManifestWorkReplicaSet NAME, oldest
first: REVISION (an undo renumbers the revision it goes back to), CREATED,
AUTHOR (the user whose request made the change), CLUSTERS (how many of its
ManifestWorks carry the revision), STATUS and SUMMARY (what changed from
the revision before). STATUS is one or more of:
  current        the replica set's spec is this revision
  complete       it was rolled out to every chosen cluster and Available on each
  failed         it failed its gate and was rolled back (with where that stands:
                 rolling back, rolled back, rollback failed, not rolled back)

With --revision, show that revision: its data (template, overrides,
replica division) and why it failed, if it did. -o json or yaml prints
the revisions (or the one) as data.`,
		Example: `  flotilla rollout history web -n apps
  flotilla rollout history web -n apps --revision 2
  flotilla rollout history web -n apps -o json | jq '.[] | select(.status | contains("failed"))'`,
		Args: nameArg("flotilla rollout history NAME [-n NAMESPACE] [--revision N]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			if o.revision < 0 {
				return fmt.Errorf("--revision %d: revisions are numbered from 1", o.revision)
			}
			return o.run(cmd.Context(), args[0])
		},
	}
	o.addTo(cmd)
	cmd.Flags().Int64Var(&o.revision, "revision", 0, "show this revision in detail")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *historyOptions) run(ctx context.Context, name string) error {
	_, rs, revs, err := o.getWithRevisions(ctx, name)
	if err != nil {
		return err
	}
	if o.revision > 0 {
		rev, err := findRevision(rs, revs, o.revision)
		if err != nil {
			return err
		}
		if o.output != cmdutil.OutputText {
			return cmdutil.PrintData(o.Streams.Out, o.output, rev)
		}
		return writeRevision(o.Streams.Out, rs, rev)
	}
	if o.output != cmdutil.OutputText {
		return cmdutil.PrintData(o.Streams.Out, o.output, revs)
	}
	if len(revs) == 0 {
		fmt.Fprintf(o.Streams.Out, "ManifestWorkReplicaSet %s/%s has no revisions yet (the hub records one when it rolls out a spec: is it a Flotilla hub of this version?)\n", rs.Namespace, rs.Name)
		return nil
	}
	return writeHistory(o.Streams.Out, rs, revs, time.Now())
}

// writeHistory prints the revisions' table, and the RolledBack condition
// when the replica set has one.
func writeHistory(w io.Writer, rs *workv1alpha1.ManifestWorkReplicaSet, revs []workview.Revision, now time.Time) error {
	rows := make([][]string, 0, len(revs))
	for _, r := range revs {
		rows = append(rows, []string{fmt.Sprint(r.Number), cmdutil.AgeColumn(metav1.NewTime(r.Created), now) + " ago",
			cmdutil.OrDash(r.Author), fmt.Sprint(r.Clusters), r.Status, cmdutil.OrDash(r.Summary)})
	}
	if err := cmdutil.PrintTable(w, []string{"REVISION", "CREATED", "AUTHOR", "CLUSTERS", "STATUS", "SUMMARY"}, rows); err != nil {
		return err
	}
	if workview.CurrentRevision(revs) == nil {
		fmt.Fprintln(w, "The current spec is not among them yet: the hub records it as a revision when it next rolls the replica set out.")
	}
	if c := workview.RollbackCondition(rs); c != nil {
		fmt.Fprintf(w, "RolledBack: %s: %s\n", c.Reason, c.Message)
	}
	return nil
}

// findRevision is revision n of revs, or an error listing those there are.
func findRevision(rs *workv1alpha1.ManifestWorkReplicaSet, revs []workview.Revision, n int64) (*workview.Revision, error) {
	for i := range revs {
		if revs[i].Number == n {
			return &revs[i], nil
		}
	}
	if len(revs) == 0 {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s has no revision %d: it has no revisions yet", rs.Namespace, rs.Name, n)
	}
	return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s has no revision %d: it has revisions %s (see %s rollout history %s -n %s)",
		rs.Namespace, rs.Name, n, workview.RevisionNumbers(revs), cmdutil.Self(), rs.Name, rs.Namespace)
}

// writeRevision prints one revision in detail.
func writeRevision(w io.Writer, rs *workv1alpha1.ManifestWorkReplicaSet, r *workview.Revision) error {
	fmt.Fprintf(w, "ManifestWorkReplicaSet %s/%s, revision %d (ControllerRevision %s)\n", rs.Namespace, rs.Name, r.Number, r.Name)
	fmt.Fprintf(w, "Created:   %s\n", r.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "Author:    %s\n", cmdutil.OrDash(r.Author))
	fmt.Fprintf(w, "Status:    %s\n", r.Status)
	fmt.Fprintf(w, "Clusters:  %d carry it\n", r.Clusters)
	fmt.Fprintf(w, "Summary:   %s\n", cmdutil.OrDash(r.Summary))
	if !r.CompleteAt.IsZero() {
		fmt.Fprintf(w, "Complete:  %s\n", r.CompleteAt.UTC().Format(time.RFC3339))
	}
	if r.Failed != "" {
		fmt.Fprintf(w, "Failed:    %s\n", r.Failed)
	}
	if r.DataErr != "" {
		fmt.Fprintf(w, "Data:      unreadable: %s\n", r.DataErr)
		return nil
	}
	data, err := yaml.Marshal(r.Data)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Data:")
	_, err = w.Write(indent(data, "  "))
	return err
}

// indent puts prefix before every line of text.
func indent(text []byte, prefix string) []byte {
	var out []byte
	atStart := true
	for _, b := range text {
		if atStart {
			out = append(out, prefix...)
		}
		out = append(out, b)
		atStart = b == '\n'
	}
	return out
}
