package scheduler

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

// defaultScoreRateLimit applies when spec.scoreRateLimit is empty.
const defaultScoreRateLimit = time.Minute

// maxWeight bounds prioritizer weights in both directions.
const maxWeight = 10

// plan is a Placement's spec, checked and compiled once per scheduling.
type plan struct {
	name           string
	predicates     []predicate
	prioritizers   []prioritizer
	steady         bool
	tolerations    []clusterv1beta1.Toleration
	spread         []spreadTerm
	groups         []groupSelector
	perGroup       intstr.IntOrString
	number         *int32
	sortBy         clusterv1beta1.SortBy
	scoreRateLimit time.Duration
}

// predicate is one requiredClusterSelector: all of its parts must match.
type predicate struct {
	labels labels.Selector
	claims labels.Selector
	cel    []*celProgram
}

// prioritizer is one scoring rule with its weight.
type prioritizer struct {
	builtIn string
	addOn   *clusterv1beta1.AddOnScore
	weight  int64
}

// spreadTerm is one spread constraint.
type spreadTerm struct {
	key      string
	claim    bool
	maxSkew  int
	required bool
}

// groupSelector is one named decision group.
type groupSelector struct {
	name   string
	labels labels.Selector
	claims labels.Selector
}

// builtIns are the known built-in prioritizers.
var builtIns = []string{
	clusterv1beta1.PrioritizerBalance,
	clusterv1beta1.PrioritizerSteady,
	clusterv1beta1.PrioritizerResourceAllocatableCPU,
	clusterv1beta1.PrioritizerResourceAllocatableMemory,
	clusterv1beta1.PrioritizerSpread,
}

// Additive mode starts from these weights; the others start at 0.
var additiveDefaults = map[string]int64{
	clusterv1beta1.PrioritizerBalance: 1,
	clusterv1beta1.PrioritizerSteady:  1,
}

// compile checks a Placement's spec and compiles it. Its errors name the
// field at fault and what to do about it.
func compile(p *clusterv1beta1.Placement) (*plan, error) {
	spec := &p.Spec
	pl := &plan{
		name:        p.Name,
		tolerations: spec.Tolerations,
		perGroup:    spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup,
		number:      spec.NumberOfClusters,
		sortBy:      spec.SortBy,
	}
	var errs []error
	if pl.number != nil && *pl.number < 0 {
		errs = append(errs, fmt.Errorf("spec.numberOfClusters: %d is negative", *pl.number))
	}
	for i := range spec.Predicates {
		pred, err := compilePredicate(&spec.Predicates[i].RequiredClusterSelector, fmt.Sprintf("spec.predicates[%d].requiredClusterSelector", i))
		errs = append(errs, err)
		pl.predicates = append(pl.predicates, pred)
	}
	var err error
	pl.prioritizers, pl.steady, err = compilePrioritizers(&spec.PrioritizerPolicy)
	errs = append(errs, err)
	for i, t := range spec.Tolerations {
		errs = append(errs, checkToleration(t, fmt.Sprintf("spec.tolerations[%d]", i)))
	}
	for i, c := range spec.SpreadPolicy.SpreadConstraints {
		term, err := compileSpread(c, fmt.Sprintf("spec.spreadPolicy.spreadConstraints[%d]", i))
		errs = append(errs, err)
		pl.spread = append(pl.spread, term)
	}
	for i, g := range spec.DecisionStrategy.GroupStrategy.DecisionGroups {
		field := fmt.Sprintf("spec.decisionStrategy.groupStrategy.decisionGroups[%d].groupClusterSelector", i)
		ls, err1 := selector(&g.ClusterSelector.LabelSelector, field+".labelSelector")
		cs, err2 := claimSelector(g.ClusterSelector.ClaimSelector, field+".claimSelector")
		errs = append(errs, err1, err2)
		pl.groups = append(pl.groups, groupSelector{name: g.GroupName, labels: ls, claims: cs})
	}
	if _, err := groupLength(pl.perGroup, 1); err != nil {
		errs = append(errs, fmt.Errorf("spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup: %w", err))
	}
	switch pl.sortBy {
	case "", clusterv1beta1.SortByClusterName, clusterv1beta1.SortByScore:
	default:
		errs = append(errs, fmt.Errorf("spec.sortBy: %q is neither %s nor %s", pl.sortBy, clusterv1beta1.SortByClusterName, clusterv1beta1.SortByScore))
	}
	pl.scoreRateLimit, err = parseRateLimit(spec.ScoreRateLimit)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return pl, nil
}

func compilePredicate(cs *clusterv1beta1.ClusterSelector, field string) (predicate, error) {
	var pred predicate
	var errs []error
	var err error
	pred.labels, err = selector(&cs.LabelSelector, field+".labelSelector")
	errs = append(errs, err)
	pred.claims, err = claimSelector(cs.ClaimSelector, field+".claimSelector")
	errs = append(errs, err)
	for i, expr := range cs.CelSelector.CelExpressions {
		prg, err := compileCEL(expr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.celSelector.celExpressions[%d]: %w", field, i, err))
			continue
		}
		pred.cel = append(pred.cel, prg)
	}
	return pred, errors.Join(errs...)
}

// selector converts a label selector; an empty one selects everything.
func selector(ls *metav1.LabelSelector, field string) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return labels.Nothing(), fmt.Errorf("%s: %w", field, err)
	}
	return sel, nil
}

// claimSelector converts a claim selector into a selector over claims as labels.
func claimSelector(cs clusterv1beta1.ClusterClaimSelector, field string) (labels.Selector, error) {
	return selector(&metav1.LabelSelector{MatchExpressions: cs.MatchExpressions}, field)
}

func compilePrioritizers(policy *clusterv1beta1.PrioritizerPolicy) ([]prioritizer, bool, error) {
	weights := map[string]int64{}
	var order []string
	addOns := map[string]*clusterv1beta1.AddOnScore{}
	set := func(key string, w int64) {
		if _, ok := weights[key]; !ok {
			order = append(order, key)
		}
		weights[key] = w
	}
	switch policy.Mode {
	case "", clusterv1beta1.PrioritizerPolicyModeAdditive:
		for _, name := range builtIns {
			set(name, additiveDefaults[name])
		}
	case clusterv1beta1.PrioritizerPolicyModeExact:
	default:
		return nil, false, fmt.Errorf("spec.prioritizerPolicy.mode: %q is neither %s nor %s", policy.Mode,
			clusterv1beta1.PrioritizerPolicyModeAdditive, clusterv1beta1.PrioritizerPolicyModeExact)
	}
	var errs []error
	for i, c := range policy.Configurations {
		field := fmt.Sprintf("spec.prioritizerPolicy.configurations[%d]", i)
		w := int64(1)
		if c.Weight != nil {
			w = int64(*c.Weight)
		}
		if w < -maxWeight || w > maxWeight {
			errs = append(errs, fmt.Errorf("%s.weight: %d is outside -%d..%d", field, w, maxWeight, maxWeight))
			continue
		}
		sc := c.ScoreCoordinate
		switch {
		case sc == nil:
			errs = append(errs, fmt.Errorf("%s.scoreCoordinate: missing: name a builtIn prioritizer or an addOn score", field))
		case sc.Type == "" || sc.Type == clusterv1beta1.ScoreCoordinateTypeBuiltIn:
			if !isBuiltIn(sc.BuiltIn) {
				errs = append(errs, fmt.Errorf("%s.scoreCoordinate.builtIn: unknown prioritizer %q: use one of %s, or type %s with addOn",
					field, sc.BuiltIn, strings.Join(builtIns, ", "), clusterv1beta1.ScoreCoordinateTypeAddOn))
				continue
			}
			set(sc.BuiltIn, w)
		case sc.Type == clusterv1beta1.ScoreCoordinateTypeAddOn:
			if sc.AddOn == nil || sc.AddOn.ResourceName == "" || sc.AddOn.ScoreName == "" {
				errs = append(errs, fmt.Errorf("%s.scoreCoordinate.addOn: type %s needs addOn.resourceName and addOn.scoreName",
					field, clusterv1beta1.ScoreCoordinateTypeAddOn))
				continue
			}
			key := "AddOn/" + sc.AddOn.ResourceName + "/" + sc.AddOn.ScoreName
			addOns[key] = sc.AddOn
			set(key, w)
		default:
			errs = append(errs, fmt.Errorf("%s.scoreCoordinate.type: %q is neither %s nor %s", field, sc.Type,
				clusterv1beta1.ScoreCoordinateTypeBuiltIn, clusterv1beta1.ScoreCoordinateTypeAddOn))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, false, err
	}
	var out []prioritizer
	for _, key := range order {
		if weights[key] == 0 {
			continue
		}
		if a, ok := addOns[key]; ok {
			out = append(out, prioritizer{addOn: a, weight: weights[key]})
		} else {
			out = append(out, prioritizer{builtIn: key, weight: weights[key]})
		}
	}
	return out, weights[clusterv1beta1.PrioritizerSteady] > 0, nil
}

func isBuiltIn(name string) bool {
	for _, b := range builtIns {
		if b == name {
			return true
		}
	}
	return false
}

func checkToleration(t clusterv1beta1.Toleration, field string) error {
	switch t.Operator {
	case "", clusterv1beta1.TolerationOpEqual:
		if t.Key == "" {
			return fmt.Errorf("%s: operator Equal needs a key; use operator Exists to tolerate every taint", field)
		}
	case clusterv1beta1.TolerationOpExists:
		if t.Value != "" {
			return fmt.Errorf("%s: operator Exists takes no value (got %q)", field, t.Value)
		}
	default:
		return fmt.Errorf("%s.operator: %q is neither %s nor %s", field, t.Operator, clusterv1beta1.TolerationOpEqual, clusterv1beta1.TolerationOpExists)
	}
	switch t.Effect {
	case "", clusterv1.TaintEffectNoSelect, clusterv1.TaintEffectPreferNoSelect, clusterv1.TaintEffectNoSelectIfNew:
	default:
		return fmt.Errorf("%s.effect: unknown effect %q: use %s, %s or %s, or leave it empty for all", field, t.Effect,
			clusterv1.TaintEffectNoSelect, clusterv1.TaintEffectPreferNoSelect, clusterv1.TaintEffectNoSelectIfNew)
	}
	if t.TolerationSeconds != nil && *t.TolerationSeconds < 0 {
		return fmt.Errorf("%s.tolerationSeconds: %d is negative", field, *t.TolerationSeconds)
	}
	return nil
}

func compileSpread(c clusterv1beta1.SpreadConstraintsTerm, field string) (spreadTerm, error) {
	term := spreadTerm{key: c.TopologyKey, maxSkew: int(c.MaxSkew)}
	if term.maxSkew <= 0 {
		term.maxSkew = 1
	}
	var errs []error
	if c.TopologyKey == "" {
		errs = append(errs, fmt.Errorf("%s.topologyKey: missing", field))
	}
	switch c.TopologyKeyType {
	case clusterv1beta1.TopologyKeyTypeLabel:
	case clusterv1beta1.TopologyKeyTypeClaim:
		term.claim = true
	default:
		errs = append(errs, fmt.Errorf("%s.topologyKeyType: %q is neither %s nor %s", field, c.TopologyKeyType,
			clusterv1beta1.TopologyKeyTypeLabel, clusterv1beta1.TopologyKeyTypeClaim))
	}
	switch c.WhenUnsatisfiable {
	case "", clusterv1beta1.ScheduleAnyway:
	case clusterv1beta1.DoNotSchedule:
		term.required = true
	default:
		errs = append(errs, fmt.Errorf("%s.whenUnsatisfiable: %q is neither %s nor %s", field, c.WhenUnsatisfiable,
			clusterv1beta1.DoNotSchedule, clusterv1beta1.ScheduleAnyway))
	}
	return term, errors.Join(errs...)
}

// groupLength is the size of decision groups for total selected clusters:
// a number, or a percentage rounded up; at least 1, at most total.
func groupLength(v intstr.IntOrString, total int) (int, error) {
	length := total
	switch {
	case v.Type == intstr.Int:
		length = v.IntValue()
	case v.StrVal == "":
	case strings.HasSuffix(v.StrVal, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(v.StrVal, "%"), 64)
		if err != nil || f <= 0 || f > 100 {
			return 0, fmt.Errorf("%q is not a percentage from 1%% to 100%%", v.StrVal)
		}
		length = int(math.Ceil(f / 100 * float64(total)))
	default:
		n, err := strconv.Atoi(v.StrVal)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is neither a positive number nor a percentage", v.StrVal)
		}
		length = n
	}
	if length <= 0 || length > total {
		length = total
	}
	return length, nil
}

// parseRateLimit parses spec.scoreRateLimit: a number and h, m or s.
func parseRateLimit(s string) (time.Duration, error) {
	if s == "" {
		return defaultScoreRateLimit, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || !strings.ContainsAny(s[len(s)-1:], "hms") {
		return 0, fmt.Errorf("spec.scoreRateLimit: %q is not a duration such as 30s, 1m or 2h", s)
	}
	return d, nil
}
