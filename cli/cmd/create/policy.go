package create

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

type createPolicyOptions struct {
	*cmdutil.Globals
	file      string
	namespace string
	placement string
	wait      bool
	timeout   time.Duration
}

// withPolicyCreates adds `create policy` to the create command.
func withPolicyCreates(g *cmdutil.Globals, create *cobra.Command) *cobra.Command {
	create.AddCommand(newCreatePolicyCommand(g))
	return create
}

func newCreatePolicyCommand(g *cmdutil.Globals) *cobra.Command {
	o := &createPolicyOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "policy -f FILE --placement NAME [-n NAMESPACE] [--wait]",
		Short: "Create Policies and bind them to a Placement",
		Long: `Create (or update) the Policies of FILE on the hub, in their namespace (-n
overrides it), and bind each to the Placement --placement of that namespace
with a PlacementBinding named <policy>-<placement>. The hub then copies each
Policy to the clusters the Placement chooses, and their agents evaluate it.

--wait waits until every chosen cluster reports the Policy Compliant, with a
line for each change, and fails after --timeout saying which clusters are not.`,
		Example: `  # Require namespace prod on every cluster of the global set:
  flotilla clusterset bind global -n policies
  flotilla create placement everywhere -n policies --clustersets global
  flotilla create policy -f policy-namespace.yaml --placement everywhere --wait`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.file == "" {
				return errors.New("-f is required: name a file of Policy objects")
			}
			if o.placement == "" {
				return errors.New("--placement is required: name the Placement that chooses the clusters (see flotilla create placement)")
			}
			if o.timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.timeout)
			}
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "filename", "f", "", "file of Policy objects (YAML or JSON, one or more documents)")
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the Policies (default: each Policy's own, else default)")
	f.StringVar(&o.placement, "placement", "", "the Placement, in the Policies' namespace, that chooses the clusters")
	f.BoolVar(&o.wait, "wait", false, "wait until every chosen cluster reports each Policy Compliant")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long --wait waits")
	return cmd
}

func (o *createPolicyOptions) run(ctx context.Context) error {
	policies, err := o.read()
	if err != nil {
		return err
	}
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	prog := cmdutil.NewProgress(o.Streams.ErrOut)
	for _, p := range policies {
		if err := ensureNamespace(ctx, c, p.Namespace); err != nil {
			return err
		}
		if err := applyPolicy(ctx, c, p); err != nil {
			return err
		}
		prog.Report("Hub: Policy %s/%s written", p.Namespace, p.Name)
		if err := bindPolicy(ctx, c, p, o.placement); err != nil {
			return err
		}
		prog.Report("Hub: Policy %s/%s bound to Placement %s", p.Namespace, p.Name, o.placement)
	}
	if !o.wait {
		return nil
	}
	deadline := time.Now().Add(o.timeout)
	for _, p := range policies {
		if err := o.waitCompliant(ctx, c, p, deadline); err != nil {
			return err
		}
	}
	return nil
}

// read returns the Policies of the file, in the namespace they go to.
func (o *createPolicyOptions) read() ([]*policyv1.Policy, error) {
	objs, err := engine.ReadFile(o.file)
	if err != nil {
		return nil, err
	}
	var out []*policyv1.Policy
	for _, u := range objs {
		if u.GroupVersionKind().Group != policyv1.GroupName || u.GetKind() != policyv1.PolicyKind {
			continue
		}
		p := &policyv1.Policy{}
		// Strictly, as the hub's admission does: a typo is refused, naming
		// the field, instead of dropped.
		if err := policytemplate.DecodePolicy(u.Object, p); err != nil {
			return nil, fmt.Errorf("%s: Policy %s: %w", o.file, u.GetName(), err)
		}
		switch {
		case o.namespace != "":
			p.Namespace = o.namespace
		case p.Namespace == "":
			p.Namespace = metav1.NamespaceDefault
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no Policy (kind Policy, apiVersion %s)", o.file, policyv1.GroupVersion)
	}
	return out, nil
}

func ensureNamespace(ctx context.Context, c *cmdutil.Clients, name string) error {
	err := c.Ctrl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return cmdutil.Explain(err, c.Where, "create namespace "+name)
	}
	return nil
}

// applyPolicy creates p, or replaces the spec of the Policy of its name.
func applyPolicy(ctx context.Context, c *cmdutil.Clients, p *policyv1.Policy) error {
	err := c.Ctrl.Create(ctx, p.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		return cmdutil.Explain(err, c.Where, "create Policy "+p.Namespace+"/"+p.Name)
	}
	got := &policyv1.Policy{}
	if err := c.Ctrl.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		return cmdutil.Explain(err, c.Where, "get Policy "+p.Namespace+"/"+p.Name)
	}
	got.Spec = p.Spec
	return cmdutil.Explain(c.Ctrl.Update(ctx, got), c.Where, "update Policy "+p.Namespace+"/"+p.Name)
}

// bindPolicy makes sure a PlacementBinding binds p to the placement.
func bindPolicy(ctx context.Context, c *cmdutil.Clients, p *policyv1.Policy, placement string) error {
	b := &policyv1.PlacementBinding{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name + "-" + placement, Namespace: p.Namespace},
		PlacementRef: policyv1.PlacementSubject{
			APIGroup: clusterv1beta1.GroupName, Kind: "Placement", Name: placement,
		},
		Subjects: []policyv1.Subject{{APIGroup: policyv1.GroupName, Kind: policyv1.PolicyKind, Name: p.Name}},
	}
	err := c.Ctrl.Create(ctx, b)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return cmdutil.Explain(err, c.Where, "create PlacementBinding "+b.Namespace+"/"+b.Name)
}

// waitCompliant waits until the root policy rolls up Compliant.
func (o *createPolicyOptions) waitCompliant(ctx context.Context, c *cmdutil.Clients, p *policyv1.Policy, deadline time.Time) error {
	prog := cmdutil.NewProgress(o.Streams.ErrOut)
	var last *policyv1.Policy
	err := cmdutil.PollUntil(ctx, deadline, func(ctx context.Context) (bool, error) {
		got := &policyv1.Policy{}
		if err := c.Ctrl.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return false, cmdutil.Explain(err, c.Where, "get Policy "+p.Namespace+"/"+p.Name)
		}
		last = got
		if got.Status.ComplianceState == policyv1.Compliant {
			prog.Report("Policy %s/%s is Compliant on %s.", p.Namespace, p.Name, clusterList(got))
			return true, nil
		}
		prog.Report("Waiting for Policy %s/%s: %s", p.Namespace, p.Name, complianceSummary(got))
		return false, nil
	})
	if errors.Is(err, cmdutil.ErrTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for Policy %s/%s to be Compliant: %s (see flotilla describe policy %s -n %s)",
			o.timeout, p.Namespace, p.Name, complianceSummary(last), p.Name, p.Namespace)
	}
	return err
}

func clusterList(p *policyv1.Policy) string {
	var names []string
	for _, s := range p.Status.Status {
		names = append(names, s.ClusterName)
	}
	return strings.Join(names, ", ")
}

// complianceSummary says, per cluster, how far a root policy got.
func complianceSummary(p *policyv1.Policy) string {
	if p == nil || len(p.Status.Status) == 0 {
		return "no cluster chosen or reported yet (does the Placement choose any? " + cmdutil.Self() + " get placements)"
	}
	var parts []string
	for _, s := range p.Status.Status {
		state := string(s.ComplianceState)
		if state == "" {
			state = "not reported yet"
		}
		parts = append(parts, s.ClusterName+": "+state)
	}
	return strings.Join(parts, ", ")
}
