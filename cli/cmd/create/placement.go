package create

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

type createPlacementOptions struct {
	*cmdutil.Globals
	namespace      string
	clusterSets    []string
	labelSelectors []string
	count          int32
	prioritizers   []string
	mode           string
	wait           bool
	timeout        time.Duration
}

func newCreatePlacementCommand(g *cmdutil.Globals) *cobra.Command {
	o := &createPlacementOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "placement NAME [-n NAMESPACE] [--clustersets SET,...] [--label-selectors SELECTOR] [--count N] [--prioritizers NAME:WEIGHT,...]",
		Aliases: []string{"placements"},
		Short:   "Create a Placement that chooses clusters from the sets bound to its namespace",
		Long: `Create Placement NAME in NAMESPACE. The hub chooses its clusters from the
ManagedClusterSets bound to NAMESPACE ("flotilla clusterset bind"), or only
those of --clustersets, and writes them to PlacementDecisions
NAME-decision-1, -2, ...; a chosen cluster stays chosen while it still
qualifies.

--label-selectors takes a label selector in kubectl syntax (env=prod,
tier!=test, 'region in (eu,us)'); give the flag again for alternatives: a
cluster qualifies when any of them matches. --count caps how many clusters
are chosen (default: all that qualify). --prioritizers ranks the clusters
when there are more than --count: NAME[:WEIGHT] with NAME one of Balance,
Steady, ResourceAllocatableCPU, ResourceAllocatableMemory, or
RESOURCE/SCORE for a score of the AddOnPlacementScores RESOURCE, and WEIGHT
from -10 to 10 (default 1). In the default mode, Additive, Balance and
Steady also count with weight 1 unless given; --prioritizer-mode Exact uses
only those given.

With --wait, the command waits until the hub has scheduled the placement
and prints the chosen clusters.`,
		Example: `  # Two production clusters, preferring those with the most free CPU.
  flotilla create placement web -n apps --clustersets prod \
      --label-selectors env=prod --count 2 --prioritizers ResourceAllocatableCPU:2 --wait

  # Every cluster in eu or us that is not a test cluster.
  flotilla create placement monitoring -n ops --label-selectors 'region in (eu,us),tier!=test'

  # Clusters labelled gpu=true or with accelerator=tpu.
  flotilla create placement ml -n ml --label-selectors gpu=true --label-selectors accelerator=tpu`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name the Placement: flotilla create placement NAME -n NAMESPACE (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := o.placement(args[0], cmd.Flags().Changed("count"))
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), p)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "the Placement's namespace (default: the kubeconfig context's, else default)")
	f.StringSliceVar(&o.clusterSets, "clustersets", nil, "choose only from these bound ManagedClusterSets, comma separated (default: every set bound to the namespace)")
	f.StringArrayVar(&o.labelSelectors, "label-selectors", nil, "label selector a cluster must match; repeat the flag for alternatives")
	f.Int32Var(&o.count, "count", 0, "how many clusters to choose (default: every cluster that qualifies)")
	f.StringSliceVar(&o.prioritizers, "prioritizers", nil, "NAME[:WEIGHT] of the prioritizers that rank clusters, comma separated")
	f.StringVar(&o.mode, "prioritizer-mode", "", "Additive (the default prioritizers count too) or Exact (only those given)")
	f.BoolVar(&o.wait, "wait", false, "wait until the hub has chosen the clusters, and print them")
	f.DurationVar(&o.timeout, "timeout", time.Minute, "how long --wait waits")
	_ = cmd.RegisterFlagCompletionFunc("prioritizer-mode", cobra.FixedCompletions(
		[]string{string(clusterv1beta1.PrioritizerPolicyModeAdditive), string(clusterv1beta1.PrioritizerPolicyModeExact)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// placement builds the Placement the flags describe, checking them all first.
func (o *createPlacementOptions) placement(name string, countSet bool) (*clusterv1beta1.Placement, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("%q is not a valid Placement name: %s", name, strings.Join(errs, "; "))
	}
	ns := o.NamespaceFlag(o.namespace)
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, fmt.Errorf("--namespace %q is not a valid namespace name: %s", ns, strings.Join(errs, "; "))
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("--timeout %s must be positive", o.timeout)
	}
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, set := range cmdutil.CleanClusterList(o.clusterSets) {
		if err := cmdutil.ValidateSetName(set); err != nil {
			return nil, fmt.Errorf("--clustersets: %w", err)
		}
		p.Spec.ClusterSets = append(p.Spec.ClusterSets, set)
	}
	for _, s := range o.labelSelectors {
		sel, err := cmdutil.ParseLabelSelector("--label-selectors", s)
		if err != nil {
			return nil, err
		}
		p.Spec.Predicates = append(p.Spec.Predicates, clusterv1beta1.ClusterPredicate{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: *sel}})
	}
	if countSet {
		if o.count < 0 {
			return nil, fmt.Errorf("--count %d is negative", o.count)
		}
		p.Spec.NumberOfClusters = &o.count
	}
	switch strings.ToLower(o.mode) {
	case "", "additive":
		p.Spec.PrioritizerPolicy.Mode = clusterv1beta1.PrioritizerPolicyModeAdditive
	case "exact":
		p.Spec.PrioritizerPolicy.Mode = clusterv1beta1.PrioritizerPolicyModeExact
	default:
		return nil, fmt.Errorf("--prioritizer-mode %q is neither Additive nor Exact", o.mode)
	}
	for _, s := range o.prioritizers {
		cfg, err := parsePrioritizer(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--prioritizers %q: %w", s, err)
		}
		p.Spec.PrioritizerPolicy.Configurations = append(p.Spec.PrioritizerPolicy.Configurations, cfg)
	}
	return p, nil
}

// builtInPrioritizers are the names --prioritizers accepts besides AddOn scores.
var builtInPrioritizers = []string{
	clusterv1beta1.PrioritizerBalance,
	clusterv1beta1.PrioritizerSteady,
	clusterv1beta1.PrioritizerResourceAllocatableCPU,
	clusterv1beta1.PrioritizerResourceAllocatableMemory,
	clusterv1beta1.PrioritizerSpread,
}

// parsePrioritizer parses NAME[:WEIGHT]: a built-in prioritizer (any
// case), or RESOURCE/SCORE of an AddOnPlacementScore.
func parsePrioritizer(s string) (clusterv1beta1.PrioritizerConfig, error) {
	name, weightText, hasWeight := strings.Cut(s, ":")
	weight := int32(1)
	if hasWeight {
		w, err := strconv.ParseInt(weightText, 10, 32)
		if err != nil || w < -10 || w > 10 {
			return clusterv1beta1.PrioritizerConfig{}, fmt.Errorf("the weight %q is not a whole number from -10 to 10", weightText)
		}
		weight = int32(w)
	}
	cfg := clusterv1beta1.PrioritizerConfig{Weight: &weight}
	if resource, score, isAddOn := strings.Cut(name, "/"); isAddOn {
		if resource == "" || score == "" {
			return cfg, errors.New("an AddOn score is RESOURCE/SCORE, both non-empty")
		}
		cfg.ScoreCoordinate = &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeAddOn,
			AddOn: &clusterv1beta1.AddOnScore{ResourceName: resource, ScoreName: score}}
		return cfg, nil
	}
	i := slices.IndexFunc(builtInPrioritizers, func(b string) bool { return strings.EqualFold(b, name) })
	if i < 0 {
		return cfg, fmt.Errorf("unknown prioritizer %q: use one of %s, or RESOURCE/SCORE for an AddOnPlacementScore",
			name, strings.Join(builtInPrioritizers, ", "))
	}
	cfg.ScoreCoordinate = &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: builtInPrioritizers[i]}
	return cfg, nil
}

func (o *createPlacementOptions) run(ctx context.Context, p *clusterv1beta1.Placement) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	bound, err := boundSets(ctx, c, p.Namespace)
	if err != nil {
		return err
	}
	if err := c.Ctrl.Create(ctx, p); err != nil {
		switch {
		case apierrors.IsAlreadyExists(err):
			return fmt.Errorf("Placement %s already exists in namespace %s (see `%s get placements %s -n %s`)", p.Name, p.Namespace, cmdutil.Self(), p.Name, p.Namespace)
		case apierrors.IsNotFound(err):
			return fmt.Errorf("namespace %s does not exist on the hub: create it, or bind a set to it with `flotilla clusterset bind SET --namespace %s`", p.Namespace, p.Namespace)
		}
		return cmdutil.ExplainClusterAPI(err, c, fmt.Sprintf("create Placement %s/%s", p.Namespace, p.Name))
	}
	fmt.Fprintf(o.Streams.Out, "Placement %s created in namespace %s.\n", p.Name, p.Namespace)
	switch {
	case len(bound) == 0:
		o.Notef("Note: no ManagedClusterSet is bound to namespace %s, so the placement cannot choose any cluster: bind one with `flotilla clusterset bind SET --namespace %s`",
			p.Namespace, p.Namespace)
	case len(p.Spec.ClusterSets) > 0:
		var unbound []string
		for _, s := range p.Spec.ClusterSets {
			if !slices.Contains(bound, s) {
				unbound = append(unbound, s)
			}
		}
		if len(unbound) > 0 {
			o.Notef("Note: ManagedClusterSets [%s] are not bound to namespace %s (bound: [%s]); the placement ignores them",
				strings.Join(unbound, ", "), p.Namespace, strings.Join(bound, ", "))
		}
	}
	if !o.wait {
		o.Notef("See the clusters it chooses with `%s get placements %s -n %s`.", cmdutil.Self(), p.Name, p.Namespace)
		return nil
	}
	return o.waitScheduled(ctx, c, p)
}

// boundSets lists the sets bound to a namespace.
func boundSets(ctx context.Context, c *cmdutil.Clients, namespace string) ([]string, error) {
	list := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := c.Ctrl.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, cmdutil.ExplainClusterAPI(err, c, "list the ManagedClusterSetBindings of namespace "+namespace)
	}
	var out []string
	for _, b := range list.Items {
		if b.Name == b.Spec.ClusterSet {
			out = append(out, b.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// waitScheduled waits until the hub reports on the placement's current
// spec, then prints the chosen clusters and why, if fewer than asked.
func (o *createPlacementOptions) waitScheduled(ctx context.Context, c *cmdutil.Clients, p *clusterv1beta1.Placement) error {
	key := client.ObjectKeyFromObject(p)
	err := cmdutil.PollUntil(ctx, time.Now().Add(o.timeout), func(ctx context.Context) (bool, error) {
		if err := c.Ctrl.Get(ctx, key, p); err != nil {
			return false, cmdutil.ExplainClusterAPI(err, c, "get Placement "+key.String())
		}
		cond := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied)
		misconfigured := meta.IsStatusConditionTrue(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured)
		return misconfigured || (cond != nil && cond.ObservedGeneration >= p.Generation), nil
	})
	if errors.Is(err, cmdutil.ErrTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for the hub to schedule Placement %s: is the hub's placement controller running?", o.timeout, key)
	}
	if err != nil {
		return err
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionMisconfigured); c != nil && c.Status == metav1.ConditionTrue {
		return fmt.Errorf("Placement %s is misconfigured: %s", key, c.Message)
	}
	decisions, err := cmdutil.PlacementClusters(ctx, c, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.Out, "Chosen clusters (%d): %s\n", len(decisions), cmdutil.OrNone(strings.Join(decisions, ", ")))
	if cond := meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied); cond.Status != metav1.ConditionTrue {
		fmt.Fprintf(o.Streams.Out, "Not satisfied (%s): %s\n", cond.Reason, cond.Message)
	}
	return nil
}
