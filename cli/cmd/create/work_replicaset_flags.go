package create

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// replicaSetFlags are the flags of `create work` that make a
// ManifestWorkReplicaSet rather than one ManifestWork per cluster.
type replicaSetFlags struct {
	placement        string
	namespace        string
	rollout          string
	maxConcurrency   string
	minSuccessTime   time.Duration
	progressDeadline string
	maxFailures      string
	images           []string
	replicas         int32
	weights          []string

	// changed says whether a flag was given on the command line.
	changed func(name string) bool
}

// rolloutFlags are the flags that make up a rollout strategy.
var rolloutFlags = []string{"rollout", "max-concurrency", "min-success-time", "progress-deadline", "max-failures"}

// replicaSetOnlyFlags are the flags that mean nothing without a ManifestWorkReplicaSet.
var replicaSetOnlyFlags = append([]string{"image", "replicas", "weight"}, rolloutFlags...)

// addFlags adds the replica set flags to create work, with shell completion of --rollout.
func (r *replicaSetFlags) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.placement, "placement", "", "[NAMESPACE/]NAME of the Placement that chooses the clusters: creates a ManifestWorkReplicaSet in its namespace")
	f.StringVarP(&r.namespace, "namespace", "n", "", "namespace of the ManifestWorkReplicaSet and its Placement (default: the file's, else the kubeconfig context's, else default)")
	f.StringVar(&r.rollout, "rollout", "", "how the clusters receive the work: All (at once, the default), Progressive (--max-concurrency at a time) or ProgressivePerGroup (one decision group at a time)")
	f.StringVar(&r.maxConcurrency, "max-concurrency", "", "with --rollout Progressive: how many clusters receive the work at once, a number or a percentage (e.g. 1, 25%)")
	f.DurationVar(&r.minSuccessTime, "min-success-time", 0, "with a Progressive rollout: how long a cluster must stay successful before the next ones receive the work (e.g. 30s, 5m)")
	f.StringVar(&r.progressDeadline, "progress-deadline", "", "how long a cluster may take to succeed before it counts as failed (e.g. 90s, 10m, 2h), or None to wait forever (the default)")
	f.StringVar(&r.maxFailures, "max-failures", "", "with a Progressive rollout: how many clusters may fail before the rollout stops, a number or a percentage (default 0)")
	f.StringArrayVar(&r.images, "image", nil, "CLUSTER=IMAGE or CLUSTER/CONTAINER=IMAGE: run IMAGE on that cluster instead of the template's (IMAGE :TAG changes only the tag); repeatable")
	f.Int32Var(&r.replicas, "replicas", 0, "total replicas to divide across the chosen clusters by --weight (default: the manifest's own spec.replicas)")
	f.StringArrayVar(&r.weights, "weight", nil, "CLUSTER=WEIGHT: that cluster's share of the replicas (other clusters weigh 1); repeatable")
	_ = cmd.RegisterFlagCompletionFunc("rollout", cobra.FixedCompletions(
		[]string{string(workv1alpha1.All), string(workv1alpha1.Progressive), string(workv1alpha1.ProgressivePerGroup)}, cobra.ShellCompDirectiveNoFileComp))
}

// used lists the replica-set-only flags that were given.
func (r *replicaSetFlags) used(names []string) []string {
	var out []string
	for _, n := range names {
		if r.changed(n) {
			out = append(out, "--"+n)
		}
	}
	return out
}

// placementRef splits --placement into namespace and name, the namespace
// coming from NAMESPACE/, else -n, else fallback.
func (r *replicaSetFlags) placementRef(fallback string) (namespace, name string, err error) {
	name = r.placement
	if ns, n, ok := strings.Cut(r.placement, "/"); ok {
		if r.namespace != "" && r.namespace != ns {
			return "", "", fmt.Errorf("--placement %s is in namespace %s, but -n says %s: give the namespace once", r.placement, ns, r.namespace)
		}
		namespace, name = ns, n
	}
	if namespace == "" {
		namespace = cmp.Or(r.namespace, fallback)
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return "", "", fmt.Errorf("--placement %s: %q is not a valid namespace name: %s", r.placement, namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); name != "" && len(errs) > 0 {
		return "", "", fmt.Errorf("--placement %s: %q is not a valid Placement name: %s", r.placement, name, strings.Join(errs, "; "))
	}
	return namespace, name, nil
}

// replicaSet builds the ManifestWorkReplicaSet NAME that the flags and the
// -f source describe, checking every flag first. defaultNamespace is the
// kubeconfig context's namespace, used when nothing else names one.
func (r *replicaSetFlags) replicaSet(name string, src *workSource, defaultNamespace string) (*workv1alpha1.ManifestWorkReplicaSet, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("%q is not a valid ManifestWorkReplicaSet name: %s", name, strings.Join(errs, "; "))
	}
	spec := workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: *src.spec.DeepCopy()}
	if src.replicaSet != nil {
		spec = *src.replicaSet.DeepCopy()
		spec.ManifestWorkTemplate = *src.spec.DeepCopy()
	}
	ns, placement, err := r.placementRef(cmp.Or(src.namespace, defaultNamespace))
	if err != nil {
		return nil, err
	}
	var strategy *workv1alpha1.RolloutStrategy
	if len(r.used(rolloutFlags)) > 0 {
		s, err := r.rolloutStrategy()
		if err != nil {
			return nil, err
		}
		strategy = &s
	}
	switch {
	case placement != "":
		ref := workv1alpha1.LocalPlacementReference{Name: placement, RolloutStrategy: workv1alpha1.RolloutStrategy{Type: workv1alpha1.All}}
		if i := slices.IndexFunc(spec.PlacementRefs, func(p workv1alpha1.LocalPlacementReference) bool { return p.Name == placement }); i >= 0 {
			ref = spec.PlacementRefs[i] // the file's strategy, unless flags give one
		}
		spec.PlacementRefs = []workv1alpha1.LocalPlacementReference{ref}
	case len(spec.PlacementRefs) == 0:
		return nil, errors.New("--placement is required: name the Placement that chooses the clusters, e.g. --placement apps/web (see flotilla create placement)")
	}
	if strategy != nil {
		for i := range spec.PlacementRefs {
			spec.PlacementRefs[i].RolloutStrategy = *strategy.DeepCopy()
		}
	}
	images, err := parseImageOverrides(r.images)
	if err != nil {
		return nil, err
	}
	spec.Overrides = append(spec.Overrides, images...)
	if used := r.used([]string{"replicas", "weight"}); len(used) > 0 {
		if spec.ReplicaDivision != nil {
			return nil, fmt.Errorf("%s: the ManifestWorkReplicaSet of -f already has a replicaDivision: give the division either in the file or with flags, not both", strings.Join(used, " and "))
		}
		if spec.ReplicaDivision, err = r.division(); err != nil {
			return nil, err
		}
	}
	if spec.CascadeDeletionPolicy == "" {
		spec.CascadeDeletionPolicy = workv1alpha1.Background
	}
	return &workv1alpha1.ManifestWorkReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "ManifestWorkReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: maps.Clone(src.labels), Annotations: maps.Clone(src.annotations)},
		Spec:       spec,
	}, nil
}

// rolloutStrategy is the strategy of --rollout and the flags that tune it.
func (r *replicaSetFlags) rolloutStrategy() (workv1alpha1.RolloutStrategy, error) {
	types := []workv1alpha1.RolloutType{workv1alpha1.All, workv1alpha1.Progressive, workv1alpha1.ProgressivePerGroup}
	typ := workv1alpha1.All
	if r.rollout != "" {
		i := slices.IndexFunc(types, func(t workv1alpha1.RolloutType) bool { return strings.EqualFold(string(t), r.rollout) })
		if i < 0 {
			return workv1alpha1.RolloutStrategy{}, fmt.Errorf("--rollout %q is not a rollout strategy: use All, Progressive or ProgressivePerGroup", r.rollout)
		}
		typ = types[i]
	}
	var cfg workv1alpha1.RolloutConfig
	progressiveOnly := r.used([]string{"min-success-time", "max-failures"})
	if typ == workv1alpha1.All && len(progressiveOnly) > 0 {
		return workv1alpha1.RolloutStrategy{}, fmt.Errorf("%s only apply to a progressive rollout: add --rollout Progressive or --rollout ProgressivePerGroup", strings.Join(progressiveOnly, " and "))
	}
	if r.changed("min-success-time") {
		if r.minSuccessTime < 0 {
			return workv1alpha1.RolloutStrategy{}, fmt.Errorf("--min-success-time %s is negative: give a duration such as 30s or 5m", r.minSuccessTime)
		}
		cfg.MinSuccessTime = metav1.Duration{Duration: r.minSuccessTime}
	}
	if r.changed("progress-deadline") {
		d, err := parseProgressDeadline(r.progressDeadline)
		if err != nil {
			return workv1alpha1.RolloutStrategy{}, err
		}
		cfg.ProgressDeadline = d
	}
	if r.changed("max-failures") {
		v, err := parseCountOrPercent("--max-failures", r.maxFailures, 0)
		if err != nil {
			return workv1alpha1.RolloutStrategy{}, err
		}
		cfg.MaxFailures = v
	}
	s := workv1alpha1.RolloutStrategy{Type: typ}
	if r.changed("max-concurrency") && typ != workv1alpha1.Progressive {
		return s, fmt.Errorf("--max-concurrency only applies to --rollout Progressive (%s rolls out %s)", typ,
			map[workv1alpha1.RolloutType]string{workv1alpha1.All: "to every cluster at once", workv1alpha1.ProgressivePerGroup: "one decision group at a time"}[typ])
	}
	switch typ {
	case workv1alpha1.All:
		s.All = &workv1alpha1.RolloutAll{RolloutConfig: cfg}
	case workv1alpha1.Progressive:
		s.Progressive = &workv1alpha1.RolloutProgressive{RolloutConfig: cfg}
		if r.changed("max-concurrency") {
			v, err := parseCountOrPercent("--max-concurrency", r.maxConcurrency, 1)
			if err != nil {
				return s, err
			}
			s.Progressive.MaxConcurrency = v
		}
	case workv1alpha1.ProgressivePerGroup:
		s.ProgressivePerGroup = &workv1alpha1.RolloutProgressivePerGroup{RolloutConfig: cfg}
	}
	return s, nil
}

var countOrPercent = regexp.MustCompile(`^(?:(100|[0-9]{1,2})%|([0-9]+))$`)

// parseCountOrPercent reads a number of clusters (at least least) or a
// percentage from 0% to 100%, as the API's maxConcurrency and maxFailures are.
func parseCountOrPercent(flag, s string, least int) (intstr.IntOrString, error) {
	m := countOrPercent.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return intstr.IntOrString{}, fmt.Errorf("%s %q is neither a number of clusters (e.g. 2) nor a percentage from 0%% to 100%% (e.g. 25%%)", flag, s)
	}
	if m[1] != "" {
		if p, _ := strconv.Atoi(m[1]); p < least {
			return intstr.IntOrString{}, fmt.Errorf("%s %s must be at least %d%%", flag, s, least)
		}
		return intstr.FromString(m[1] + "%"), nil
	}
	n, err := strconv.Atoi(m[2])
	if err != nil || n > 1<<30 {
		return intstr.IntOrString{}, fmt.Errorf("%s %s is too large", flag, s)
	}
	if n < least {
		return intstr.IntOrString{}, fmt.Errorf("%s %s must be at least %d", flag, s, least)
	}
	return intstr.FromInt32(int32(n)), nil
}

// parseProgressDeadline reads None or a positive duration, and writes it
// in the one unit the API accepts (90s, 10m, 2h): 1m30s becomes 90s.
func parseProgressDeadline(s string) (string, error) {
	if strings.EqualFold(s, workv1alpha1.ProgressDeadlineNone) {
		return workv1alpha1.ProgressDeadlineNone, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return "", fmt.Errorf("--progress-deadline %q is neither a positive duration (e.g. 90s, 10m, 2h) nor None", s)
	}
	switch {
	case d%time.Second != 0:
		return "", fmt.Errorf("--progress-deadline %s: give whole seconds", s)
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h", nil
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m", nil
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s", nil
}

// imageOverrideName names the override --image makes for a cluster.
func imageOverrideName(cluster string) string { return "image-" + cluster }

// parseImageOverrides turns --image CLUSTER[/CONTAINER]=IMAGE flags into one
// override per cluster, in the order the clusters were first named.
func parseImageOverrides(flags []string) ([]workv1alpha1.ClusterOverride, error) {
	var out []workv1alpha1.ClusterOverride
	for _, f := range flags {
		target, image, ok := strings.Cut(f, "=")
		if !ok || target == "" || image == "" {
			return nil, fmt.Errorf("--image %q: write CLUSTER=IMAGE or CLUSTER/CONTAINER=IMAGE, e.g. --image cluster2=registry.eu.example.com/hello:1.4", f)
		}
		cluster, container, _ := strings.Cut(target, "/")
		if err := cmdutil.ValidateClusterName(cluster); err != nil {
			return nil, fmt.Errorf("--image %q: %w", f, err)
		}
		if errs := validation.IsDNS1123Label(container); container != "" && len(errs) > 0 {
			return nil, fmt.Errorf("--image %q: %q is not a valid container name: %s", f, container, strings.Join(errs, "; "))
		}
		if strings.ContainsAny(image, " \t\n") {
			return nil, fmt.Errorf("--image %q: the image %q contains white space", f, image)
		}
		io := workv1alpha1.ImageOverride{Container: container, Image: image}
		if tag, ok := strings.CutPrefix(image, ":"); ok {
			if tag == "" {
				return nil, fmt.Errorf("--image %q: the tag after : is empty", f)
			}
			io = workv1alpha1.ImageOverride{Container: container, Tag: tag}
		}
		i := slices.IndexFunc(out, func(o workv1alpha1.ClusterOverride) bool { return o.Name == imageOverrideName(cluster) })
		if i < 0 {
			out = append(out, workv1alpha1.ClusterOverride{Name: imageOverrideName(cluster), ClusterNames: []string{cluster}})
			i = len(out) - 1
		}
		for _, prev := range out[i].Images {
			if prev.Container == container {
				return nil, fmt.Errorf("--image %q: %s was given twice for the same container of cluster %s", f, "--image", cluster)
			}
		}
		out[i].Images = append(out[i].Images, io)
	}
	return out, nil
}

// division is the replica division of --replicas and --weight.
func (r *replicaSetFlags) division() (*workv1alpha1.ReplicaDivision, error) {
	d := &workv1alpha1.ReplicaDivision{Type: workv1alpha1.ReplicaDivisionWeighted}
	if r.changed("replicas") {
		if r.replicas < 0 {
			return nil, fmt.Errorf("--replicas %d is negative", r.replicas)
		}
		d.TotalReplicas = &r.replicas
	}
	seen := map[string]bool{}
	for _, f := range r.weights {
		cluster, w, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("--weight %q: write CLUSTER=WEIGHT, e.g. --weight cluster1=2", f)
		}
		if err := cmdutil.ValidateClusterName(cluster); err != nil {
			return nil, fmt.Errorf("--weight %q: %w", f, err)
		}
		n, err := strconv.ParseInt(w, 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--weight %q: the weight %q is not a whole number of 0 or more", f, w)
		}
		if seen[cluster] {
			return nil, fmt.Errorf("--weight %q: cluster %s was given a weight twice", f, cluster)
		}
		seen[cluster] = true
		d.Weights = append(d.Weights, workv1alpha1.ClusterWeight{ClusterNames: []string{cluster}, Weight: int32(n)})
	}
	return d, nil
}
