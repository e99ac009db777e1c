package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// withPolicyGets adds `get policies` to the get command.
func withPolicyGets(g *globalOptions, get *cobra.Command) *cobra.Command {
	get.AddCommand(newGetPoliciesCommand(g))
	return get
}

type getPoliciesOptions struct {
	*globalOptions
	namespace string
	output    string
	matrix    bool
}

func newGetPoliciesCommand(g *globalOptions) *cobra.Command {
	o := &getPoliciesOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:     "policies [-n NAMESPACE] [--matrix]",
		Aliases: []string{"policy"},
		Short:   "Show root Policies and how many of their clusters comply",
		Long: `Show the root Policies of a namespace (-n), or of every namespace: their
remediation action, their compliance rolled up over their clusters, and how
many of their clusters are compliant. --matrix shows a grid of clusters
(rows) by policies (columns) instead. Replicated policies (the copies in
cluster namespaces) are not listed.

-o json and -o yaml print the Policy objects.`,
		Example: `  flotilla get policies -n policies
  flotilla get policies --matrix`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(o.output, outputJSON, outputYAML); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace whose Policies to show (default: every namespace)")
	cmd.Flags().BoolVar(&o.matrix, "matrix", false, "show a grid of clusters by policies")
	addOutputFlag(cmd, &o.output, outputJSON, outputYAML)
	return cmd
}

func (o *getPoliciesOptions) run(ctx context.Context) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	list := &policyv1.PolicyList{}
	var opts []client.ListOption
	if o.namespace != "" {
		opts = append(opts, client.InNamespace(o.namespace))
	}
	if err := c.ctrl.List(ctx, list, opts...); err != nil {
		return explainClusterAPI(err, c, "list Policies")
	}
	list.Items = rootPolicies(list.Items)
	switch o.output {
	case outputJSON, outputYAML:
		list.APIVersion, list.Kind = policyv1.GroupVersion.String(), "PolicyList"
		list.ResourceVersion, list.Continue = "", ""
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = policyv1.GroupVersion.String(), "Policy"
			list.Items[i].ManagedFields = nil
		}
		return printData(o.streams.Out, o.output, list)
	}
	if len(list.Items) == 0 {
		o.notef("No Policies%s.", map[bool]string{true: " in namespace " + o.namespace, false: ""}[o.namespace != ""])
		return nil
	}
	if o.matrix {
		header, rows := policyMatrix(list.Items, o.namespace == "")
		return printTable(o.streams.Out, header, rows)
	}
	header, rows := policyTable(list.Items, o.namespace == "")
	return printTable(o.streams.Out, header, rows)
}

// rootPolicies keeps the policies without a root-policy label, sorted by
// namespace and name.
func rootPolicies(items []policyv1.Policy) []policyv1.Policy {
	out := slices.DeleteFunc(items, func(p policyv1.Policy) bool {
		_, replicated := p.Labels[policyv1.RootPolicyLabel]
		return replicated
	})
	slices.SortFunc(out, func(a, b policyv1.Policy) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return out
}

// policyTable is the table of `get policies`: NAMESPACE (when listing every
// namespace), NAME, REMEDIATION, COMPLIANT, CLUSTERS (compliant/total).
func policyTable(items []policyv1.Policy, withNamespace bool) (header []string, rows [][]string) {
	header = []string{"NAME", "REMEDIATION", "COMPLIANT", "CLUSTERS"}
	if withNamespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	for _, p := range items {
		compliant := 0
		for _, s := range p.Status.Status {
			if s.ComplianceState == policyv1.Compliant {
				compliant++
			}
		}
		row := []string{p.Name, orDash(strings.ToLower(string(p.Spec.RemediationAction))), complianceCell(p), fmt.Sprintf("%d/%d", compliant, len(p.Status.Status))}
		if withNamespace {
			row = append([]string{p.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// complianceCell is the rolled-up compliance of a root, Disabled or "-".
func complianceCell(p policyv1.Policy) string {
	if p.Spec.Disabled {
		return "Disabled"
	}
	return orDash(string(p.Status.ComplianceState))
}

// policyMatrix is the grid of `get policies --matrix`: one row per cluster,
// one column per policy (namespace/name when listing every namespace); a
// cell is the cluster's compliance, "-" when the policy is not placed there,
// "?" when it is but the cluster has not reported.
func policyMatrix(items []policyv1.Policy, withNamespace bool) (header []string, rows [][]string) {
	header = []string{"CLUSTER"}
	clusters := map[string]map[int]policyv1.ComplianceState{}
	for i, p := range items {
		col := p.Name
		if withNamespace {
			col = p.Namespace + "/" + p.Name
		}
		header = append(header, col)
		for _, s := range p.Status.Status {
			if clusters[s.ClusterName] == nil {
				clusters[s.ClusterName] = map[int]policyv1.ComplianceState{}
			}
			clusters[s.ClusterName][i] = cmp.Or(s.ComplianceState, "?")
		}
	}
	names := make([]string, 0, len(clusters))
	for name := range clusters {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		row := []string{name}
		for i := range items {
			row = append(row, orDash(string(clusters[name][i])))
		}
		rows = append(rows, row)
	}
	return header, rows
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type describePolicyOptions struct {
	*globalOptions
	namespace string
}

// newDescribeCommand is `flotilla describe`, with `describe policy`.
func newDescribeCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show one object of the hub in detail",
		Args:  cobra.NoArgs,
	}
	o := &describePolicyOptions{globalOptions: g}
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

func (o *describePolicyOptions) run(ctx context.Context, name string) error {
	c, err := o.clientsFor(hubSide)
	if err != nil {
		return err
	}
	root := &policyv1.Policy{}
	if err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: name}, root); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("Policy %s not found in namespace %s (see `flotilla get policies -n %s`)", name, o.namespace, o.namespace)
		}
		return explainClusterAPI(err, c, "get Policy "+o.namespace+"/"+name)
	}
	copies := &policyv1.PolicyList{}
	if err := c.ctrl.List(ctx, copies, client.MatchingLabels{policyv1.RootPolicyLabel: o.namespace + "." + name}); err != nil {
		return explainClusterAPI(err, c, "list the replicated policies of "+o.namespace+"/"+name)
	}
	messages := map[string]string{}
	for _, cp := range copies.Items {
		messages[cp.Namespace] = latestMessage(cp)
	}
	return writePolicyDescription(o.streams.Out, root, messages)
}

// latestMessage is the newest history message of a replicated policy over
// its templates.
func latestMessage(p policyv1.Policy) string {
	var best policyv1.ComplianceHistory
	for _, d := range p.Status.Details {
		if len(d.History) > 0 && (best.Message == "" || d.History[0].LastTimestamp.After(best.LastTimestamp.Time)) {
			best = d.History[0]
		}
	}
	return best.Message
}

// writePolicyDescription writes what `describe policy` shows; messages
// maps a cluster namespace to the latest message of its copy.
func writePolicyDescription(w io.Writer, root *policyv1.Policy, messages map[string]string) error {
	fmt.Fprintf(w, "Name:         %s\nNamespace:    %s\nRemediation:  %s\nDisabled:     %t\nCompliant:    %s\n",
		root.Name, root.Namespace, orDash(string(root.Spec.RemediationAction)), root.Spec.Disabled, orDash(string(root.Status.ComplianceState)))
	fmt.Fprintln(w, "Placement:")
	if len(root.Status.Placement) == 0 {
		fmt.Fprintln(w, "  (not bound: create a PlacementBinding that names this policy)")
	}
	for _, p := range root.Status.Placement {
		via := ""
		if p.PolicySet != "" {
			via = " (through PolicySet " + p.PolicySet + ")"
		}
		fmt.Fprintf(w, "  PlacementBinding %s -> Placement %s%s\n", p.PlacementBinding, p.Placement, via)
	}
	fmt.Fprintln(w, "Clusters:")
	if len(root.Status.Status) == 0 {
		fmt.Fprintln(w, "  (none)")
		return nil
	}
	rows := make([][]string, 0, len(root.Status.Status))
	for _, s := range root.Status.Status {
		rows = append(rows, []string{"  " + s.ClusterName, orDash(string(s.ComplianceState)), orDash(messages[s.ClusterNamespace])})
	}
	return printTable(w, []string{"  CLUSTER", "COMPLIANT", "MESSAGE"}, rows)
}
