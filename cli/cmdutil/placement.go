package cmdutil

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

// SetNameArg checks the one SET argument.
func SetNameArg(usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("name one ManagedClusterSet: %s (got %d arguments)", usage, len(args))
		}
		return ValidateSetName(args[0])
	}
}

// ValidateSetName requires what the clusterset label value allows.
func ValidateSetName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid ManagedClusterSet name: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// MissingSet is the error for binding set name, which does not exist.
// The hub makes the sets it keeps itself, at start: those are never the
// user's to create.
func MissingSet(name, where string) error {
	switch name {
	case clusterv1beta2.DefaultManagedClusterSetName, clusterv1beta2.GlobalManagedClusterSetName:
		return fmt.Errorf("ManagedClusterSet %s does not exist on %s, although the hub creates it when it starts: "+
			"check that flotilla-hub runs against this API server and has said that it is ready, then bind again", name, where)
	}
	return fmt.Errorf("ManagedClusterSet %s does not exist on %s: create it with `flotilla create clusterset %s`", name, where, name)
}

// SelectorColumn says how a set selects its members.
func SelectorColumn(set *clusterv1beta2.ManagedClusterSet, selErr error) string {
	cs := set.Spec.ClusterSelector
	switch {
	case selErr != nil:
		return "<invalid>"
	case cs.SelectorType == "" || cs.SelectorType == clusterv1beta2.ExclusiveClusterSetLabel:
		return "clusterset label"
	case cs.LabelSelector == nil:
		return "<nothing>"
	}
	if s := metav1.FormatLabelSelector(cs.LabelSelector); s != "<none>" {
		return s
	}
	return "<all clusters>"
}

// PlacementClusters returns the clusters a placement's PlacementDecisions
// hold, in the order of the decisions.
func PlacementClusters(ctx context.Context, c *Clients, p *clusterv1beta1.Placement) ([]string, error) {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := c.Ctrl.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name}); err != nil {
		return nil, ExplainClusterAPI(err, c, fmt.Sprintf("list the PlacementDecisions of %s/%s", p.Namespace, p.Name))
	}
	slices.SortFunc(list.Items, func(a, b clusterv1beta1.PlacementDecision) int {
		return cmp.Compare(decisionIndex(p.Name, a.Name), decisionIndex(p.Name, b.Name))
	})
	var out []string
	for _, pd := range list.Items {
		for _, d := range pd.Status.Decisions {
			out = append(out, d.ClusterName)
		}
	}
	return out, nil
}

// decisionIndex is n of <placement>-decision-<n>, or a large number.
func decisionIndex(placement, name string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(name, placement+"-decision-"))
	if err != nil {
		return int(^uint(0) >> 1)
	}
	return n
}

// PlacementMessage is what to fix when the placement is misconfigured, else
// the PlacementSatisfied message.
func PlacementMessage(p *clusterv1beta1.Placement) string {
	if c := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured); c != nil && c.Status == metav1.ConditionTrue {
		return "Misconfigured: " + c.Message
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied); c != nil {
		return c.Message
	}
	return "not scheduled yet"
}

// GroupsColumn shows the decision groups as index[:name]=count.
func GroupsColumn(groups []clusterv1beta1.DecisionGroupStatus) string {
	if len(groups) == 0 {
		return "<none>"
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		id := strconv.Itoa(int(g.DecisionGroupIndex))
		if g.DecisionGroupName != "" {
			id += ":" + g.DecisionGroupName
		}
		parts = append(parts, id+"="+strconv.Itoa(int(g.ClustersCount)))
	}
	return strings.Join(parts, ",")
}
