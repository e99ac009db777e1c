package describe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

// NewCommand returns `flotilla describe` with all its kinds.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	return withServiceDescribes(g, withDescribes(g, withWorkDescribe(g, newDescribeCommand(g))))
}

// withDescribes adds `describe cluster`, `describe clusterset` and
// `describe placement` to the describe command, so that every kind `get`
// lists can be described (work and policy are added beside).
func withDescribes(g *cmdutil.Globals, describe *cobra.Command) *cobra.Command {
	if describe.Example == "" {
		describe.Example = `  flotilla describe cluster cluster1
  flotilla describe work hello -n apps
  flotilla describe work hello --clusters cluster1
  flotilla describe placement web -n apps
  flotilla describe clusterset default
  flotilla describe policy policy-namespace -n policies
  flotilla describe serviceimport shop/web
  flotilla describe addon hello`
	}
	if describe.Long == "" {
		describe.Long = "Show one object of the hub in detail: its spec, its status and conditions, and what it relates to."
	}
	describe.Use = "describe KIND NAME"
	describe.AddCommand(newDescribeClusterCommand(g), newDescribeClusterSetCommand(g), newDescribePlacementCommand(g), newDescribeAddOnCommand(g))
	return describe
}

// writeManifestWorkDescription writes what `describe work --clusters`
// shows of one ManifestWork.
func writeManifestWorkDescription(w io.Writer, mw *workv1.ManifestWork, now time.Time) error {
	fmt.Fprintf(w, "Name:         %s\nCluster:      %s\nAge:          %s\n", mw.Name, mw.Namespace, cmdutil.AgeColumn(mw.CreationTimestamp, now))
	if owner := mw.Labels[workv1.ManifestWorkReplicaSetLabel]; owner != "" {
		ns, name, _ := strings.Cut(owner, ".")
		fmt.Fprintf(w, "Owned by:     ManifestWorkReplicaSet %s/%s (flotilla describe work %s -n %s)\n", ns, name, name, ns)
	}
	if mw.DeletionTimestamp != nil {
		fmt.Fprintln(w, "Deleting:     its agent is removing what it applied")
	}
	replicas, images := workview.ReplicasAndImages(&mw.Spec)
	fmt.Fprintf(w, "Manifests:    %d (replicas %s, images %s)\n", len(mw.Spec.Workload.Manifests), replicas, images)
	if err := writeConditions(w, mw.Status.Conditions, "(none yet: its agent has not reported)"); err != nil {
		return err
	}
	fmt.Fprintln(w, "Resources:")
	ms := workview.ManifestRows(*mw)
	if len(ms) == 0 {
		fmt.Fprintln(w, "  (none reported yet)")
		return nil
	}
	rows := make([][]string, 0, len(ms))
	for _, m := range ms {
		rows = append(rows, []string{"  " + workview.ResourceColumn(m.ResourceMeta, true),
			workview.WorkConditionColumn(m.Conditions, workv1.WorkApplied), workview.WorkConditionColumn(m.Conditions, workv1.WorkAvailable),
			cmdutil.OrDash(workview.ManifestDetails(m, now, true))})
	}
	return cmdutil.PrintTable(w, []string{"  RESOURCE", "APPLIED", "AVAILABLE", "DETAILS"}, rows)
}

// writeConditions writes a Conditions: section, or none when there are none.
func writeConditions(w io.Writer, conds []metav1.Condition, none string) error {
	fmt.Fprintln(w, "Conditions:")
	if len(conds) == 0 {
		fmt.Fprintln(w, "  "+none)
		return nil
	}
	rows := make([][]string, 0, len(conds))
	for _, c := range conds {
		rows = append(rows, []string{"  " + c.Type, string(c.Status), cmdutil.OrDash(c.Reason), cmdutil.OrDash(c.Message)})
	}
	return cmdutil.PrintTable(w, []string{"  TYPE", "STATUS", "REASON", "MESSAGE"}, rows)
}

// getToDescribe gets the cluster-scoped object name of kind gvk into obj
// for describe; notFound is the error when it does not exist. printed says
// that output asked for JSON or YAML and the object has been printed.
func getToDescribe(ctx context.Context, c *cmdutil.Clients, out io.Writer, output string, obj client.Object, gvk schema.GroupVersionKind, name, notFound string) (printed bool, err error) {
	if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, errors.New(notFound)
		}
		return false, cmdutil.ExplainClusterAPI(err, c, "get "+gvk.Kind+" "+name)
	}
	if output == cmdutil.OutputText {
		return false, nil
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	obj.SetManagedFields(nil)
	return true, cmdutil.PrintData(out, output, obj)
}

// exactlyOneName is an Args function for commands that show one object.
func exactlyOneName(kind, usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("name one %s (got %d): %s", kind, len(args), usage)
		}
		return nil
	}
}

// newDescribeCommand is `flotilla describe`, with `describe policy`.
func newDescribeCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show one object of the hub in detail",
		Args:  cobra.NoArgs,
	}
	o := &describePolicyOptions{Globals: g}
	policy := &cobra.Command{
		Use:     "policy NAME -n NAMESPACE",
		Short:   "Show a root Policy's placement and each cluster's compliance with its latest message",
		Example: `  flotilla describe policy policy-namespace -n policies`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name one Policy (got %d): flotilla describe policy NAME -n NAMESPACE", len(args))
			}
			if o.namespace == "" {
				return fmt.Errorf("say which namespace Policy %s is in: flotilla describe policy %s -n NAMESPACE", args[0], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), args[0]) },
	}
	policy.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace of the Policy")
	cmd.AddCommand(policy)
	return cmd
}
