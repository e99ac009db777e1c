package get

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

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
		Use:     "policies [NAME] [-n NAMESPACE] [--matrix]",
		Aliases: []string{"policy"},
		Short:   "Show root Policies and how many of their clusters comply",
		Long: `Show the root Policies of a namespace (-n), or of every namespace, or only
the one named NAME: their remediation action, their compliance rolled up
over their clusters, and how many of their clusters are compliant.
--matrix shows a grid of clusters (rows) by policies (columns) instead.
Replicated policies (the copies in cluster namespaces) are not listed.

-o json and -o yaml print the Policy objects: the object itself for a NAME,
as kubectl does, else a PolicyList. With --matrix they print the grid:
"policies" are its columns (namespace and name), "clusters" its rows, each
with the compliance of every policy placed on the cluster, keyed by
NAMESPACE/NAME ("" while the cluster has not reported it).`,
		Example: `  flotilla get policies -n policies
  flotilla get policies policy-namespace -n policies -o yaml
  flotilla get policies --matrix
  flotilla get policies --matrix -o json | jq '.clusters[] | select(any(.compliance[]; . == "NonCompliant")) | .name'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("name at most one Policy (got %d): flotilla get policies [NAME] [-n NAMESPACE]", len(args))
			}
			if len(args) == 1 && o.namespace == "" {
				return fmt.Errorf("say which namespace Policy %s is in: flotilla get policies %s -n NAMESPACE", args[0], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			return o.run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace whose Policies to show (default: every namespace)")
	cmd.Flags().BoolVar(&o.matrix, "matrix", false, "show a grid of clusters by policies")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *getPoliciesOptions) run(ctx context.Context, names []string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	items, err := cmdutil.GetOrList[policyv1.Policy](ctx, c, &policyv1.PolicyList{},
		cmdutil.Lookup{Kind: "Policy", Namespace: o.namespace, Names: names, ListCommand: "flotilla get policies"})
	if err != nil {
		return err
	}
	if len(names) == 0 {
		items = rootPolicies(items)
	}
	data := o.output == cmdutil.OutputJSON || o.output == cmdutil.OutputYAML
	switch {
	case data && o.matrix:
		return cmdutil.PrintData(o.Streams.Out, o.output, policyMatrixData(items))
	case data:
		gvk := policyv1.GroupVersion.WithKind("Policy")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(items, gvk), cmdutil.ListKind(gvk), len(names) == 1)
	}
	if len(items) == 0 {
		o.Notef("No Policies%s.", map[bool]string{true: " in namespace " + o.namespace, false: ""}[o.namespace != ""])
		return nil
	}
	if o.matrix {
		header, rows := policyMatrix(items, o.namespace == "")
		return cmdutil.PrintTable(o.Streams.Out, header, rows)
	}
	header, rows := policyTable(items, o.namespace == "")
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// rootPolicies keeps the policies without a root-policy label.
func rootPolicies(items []policyv1.Policy) []policyv1.Policy {
	return slices.DeleteFunc(items, func(p policyv1.Policy) bool {
		_, replicated := p.Labels[policyv1.RootPolicyLabel]
		return replicated
	})
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
	for _, p := range items {
		col := p.Name
		if withNamespace {
			col = p.Namespace + "/" + p.Name
		}
		header = append(header, col)
	}
	names, cells := complianceGrid(items)
	for _, name := range names {
		row := []string{name}
		for i := range items {
			cell := "-"
			if state, placed := cells[name][i]; placed {
				cell = cmp.Or(string(state), "?")
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// complianceGrid returns the clusters the policies are placed on, sorted,
// and per cluster the compliance of each policy placed there, by its
// index in items: "" while the cluster has not reported.
func complianceGrid(items []policyv1.Policy) ([]string, map[string]map[int]policyv1.ComplianceState) {
	cells := map[string]map[int]policyv1.ComplianceState{}
	for i, p := range items {
		for _, s := range p.Status.Status {
			if cells[s.ClusterName] == nil {
				cells[s.ClusterName] = map[int]policyv1.ComplianceState{}
			}
			cells[s.ClusterName][i] = s.ComplianceState
		}
	}
	names := make([]string, 0, len(cells))
	for name := range cells {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, cells
}

// matrixData is `get policies --matrix` as -o json|yaml prints it: the
// grid's columns, then its rows.
type matrixData struct {
	Policies []matrixPolicy  `json:"policies"`
	Clusters []matrixCluster `json:"clusters"`
}

// matrixPolicy is a column of the grid.
type matrixPolicy struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// matrixCluster is a row of the grid: the compliance of each policy placed
// on the cluster, keyed by NAMESPACE/NAME.
type matrixCluster struct {
	Name       string                              `json:"name"`
	Compliance map[string]policyv1.ComplianceState `json:"compliance"`
}

// policyMatrixData is the grid of policyMatrix as data: a policy not
// placed on a cluster is absent from its row, not "-".
func policyMatrixData(items []policyv1.Policy) matrixData {
	data := matrixData{Policies: []matrixPolicy{}, Clusters: []matrixCluster{}}
	for _, p := range items {
		data.Policies = append(data.Policies, matrixPolicy{Namespace: p.Namespace, Name: p.Name})
	}
	names, cells := complianceGrid(items)
	for _, name := range names {
		row := matrixCluster{Name: name, Compliance: map[string]policyv1.ComplianceState{}}
		for i, state := range cells[name] {
			row.Compliance[items[i].Namespace+"/"+items[i].Name] = state
		}
		data.Clusters = append(data.Clusters, row)
	}
	return data
}
