package describe

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

type describePolicyOptions struct {
	*cmdutil.Globals
	namespace string
}

func (o *describePolicyOptions) run(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	root := &policyv1.Policy{}
	if err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: name}, root); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("Policy %s not found in namespace %s (see `flotilla get policies -n %s`)", name, o.namespace, o.namespace)
		}
		return cmdutil.ExplainClusterAPI(err, c, "get Policy "+o.namespace+"/"+name)
	}
	copies := &policyv1.PolicyList{}
	if err := c.Ctrl.List(ctx, copies, client.MatchingLabels{policyv1.RootPolicyLabel: o.namespace + "." + name}); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "list the replicated policies of "+o.namespace+"/"+name)
	}
	messages := map[string]string{}
	for _, cp := range copies.Items {
		messages[cp.Namespace] = latestMessage(cp)
	}
	return writePolicyDescription(o.Streams.Out, root, messages)
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
		root.Name, root.Namespace, cmdutil.OrDash(string(root.Spec.RemediationAction)), root.Spec.Disabled, cmdutil.OrDash(string(root.Status.ComplianceState)))
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
		rows = append(rows, []string{"  " + s.ClusterName, cmdutil.OrDash(string(s.ComplianceState)), cmdutil.OrDash(messages[s.ClusterNamespace])})
	}
	return cmdutil.PrintTable(w, []string{"  CLUSTER", "COMPLIANT", "MESSAGE"}, rows)
}
