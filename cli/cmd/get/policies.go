package get

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// withPolicyGets adds `get policies` to the get command.
func withPolicyGets(g *cmdutil.Globals, get *cobra.Command) *cobra.Command {
	get.AddCommand(newGetPoliciesCommand(g))
	return get
}

type getPoliciesOptions struct {
	*cmdutil.Globals
	namespace string
	output    string
	matrix    bool
}

func newGetPoliciesCommand(g *cmdutil.Globals) *cobra.Command {
	o := &getPoliciesOptions{Globals: g}
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
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace whose Policies to show (default: every namespace)")
	cmd.Flags().BoolVar(&o.matrix, "matrix", false, "show a grid of clusters by policies")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *getPoliciesOptions) run(ctx context.Context) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	list := &policyv1.PolicyList{}
	var opts []client.ListOption
	if o.namespace != "" {
		opts = append(opts, client.InNamespace(o.namespace))
	}
	if err := c.Ctrl.List(ctx, list, opts...); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "list Policies")
	}
	list.Items = rootPolicies(list.Items)
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		list.APIVersion, list.Kind = policyv1.GroupVersion.String(), "PolicyList"
		list.ResourceVersion, list.Continue = "", ""
		for i := range list.Items {
			list.Items[i].APIVersion, list.Items[i].Kind = policyv1.GroupVersion.String(), "Policy"
			list.Items[i].ManagedFields = nil
		}
		return cmdutil.PrintData(o.Streams.Out, o.output, list)
	}
	if len(list.Items) == 0 {
		o.Notef("No Policies%s.", map[bool]string{true: " in namespace " + o.namespace, false: ""}[o.namespace != ""])
		return nil
	}
	if o.matrix {
		header, rows := policyMatrix(list.Items, o.namespace == "")
		return cmdutil.PrintTable(o.Streams.Out, header, rows)
	}
	header, rows := policyTable(list.Items, o.namespace == "")
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
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
		row := []string{p.Name, cmdutil.OrDash(strings.ToLower(string(p.Spec.RemediationAction))), complianceCell(p), fmt.Sprintf("%d/%d", compliant, len(p.Status.Status))}
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
	return cmdutil.OrDash(string(p.Status.ComplianceState))
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
			row = append(row, cmdutil.OrDash(string(clusters[name][i])))
		}
		rows = append(rows, row)
	}
	return header, rows
}
