package render

import (
	"fmt"
	"math/big"

	corev1 "k8s.io/api/core/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Divide splits total replicas across the clusters as div says and returns
// each cluster's count, keyed by name. The counts always add up to total;
// when the weights' limits make that impossible, the error says which
// numbers do not fit. The result depends only on its input (ties go to the
// cluster name that sorts first), so the CLI can preview what the
// controller will do.
func Divide(div *workv1alpha1.ReplicaDivision, total int32, clusters []Cluster) (map[string]int32, error) {
	shares, err := sharesOf(div, clusters)
	if err != nil {
		return nil, err
	}
	counts, err := apportion(int64(total), shares)
	if err != nil {
		if div.Type == workv1alpha1.ReplicaDivisionAllocatable {
			return nil, fmt.Errorf("%w (type Allocatable: a cluster weighs its weight times its allocatable %s; one that reports none weighs 0)", err, resourceOf(div))
		}
		return nil, err
	}
	out := make(map[string]int32, len(clusters))
	for i, c := range clusters {
		out[c.Name] = int32(counts[i])
	}
	return out, nil
}

// resourceOf is the allocatable resource of an Allocatable division.
func resourceOf(div *workv1alpha1.ReplicaDivision) corev1.ResourceName {
	if div.Resource == "" {
		return corev1.ResourceCPU
	}
	return corev1.ResourceName(div.Resource)
}

// sharesOf resolves each cluster's weight and limits: the first weights
// entry that selects it, else defaultWeight without limits.
func sharesOf(div *workv1alpha1.ReplicaDivision, clusters []Cluster) ([]share, error) {
	entries := make([]clusterSet, len(div.Weights))
	for i, w := range div.Weights {
		where := fmt.Sprintf("weights[%d]", i)
		set, err := newClusterSet(w.ClusterNames, w.ClusterSelector)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if w.Weight < 0 {
			return nil, fmt.Errorf("%s: weight %d is negative — use 0 or more", where, w.Weight)
		}
		if w.MinReplicas != nil && w.MaxReplicas != nil && *w.MinReplicas > *w.MaxReplicas {
			return nil, fmt.Errorf("%s: minReplicas %d exceeds maxReplicas %d — make minReplicas at most maxReplicas", where, *w.MinReplicas, *w.MaxReplicas)
		}
		if (w.MinReplicas != nil && *w.MinReplicas < 0) || (w.MaxReplicas != nil && *w.MaxReplicas < 0) {
			return nil, fmt.Errorf("%s: minReplicas and maxReplicas must not be negative", where)
		}
		entries[i] = set
	}
	defaultWeight := int32(1)
	if div.DefaultWeight != nil {
		defaultWeight = *div.DefaultWeight
	}
	if defaultWeight < 0 {
		return nil, fmt.Errorf("defaultWeight %d is negative — use 0 or more", defaultWeight)
	}
	var resource corev1.ResourceName
	switch div.Type {
	case "", workv1alpha1.ReplicaDivisionWeighted:
	case workv1alpha1.ReplicaDivisionAllocatable:
		resource = resourceOf(div)
		if resource != corev1.ResourceCPU && resource != corev1.ResourceMemory {
			return nil, fmt.Errorf("resource %q is not cpu or memory — use one of those", div.Resource)
		}
	default:
		return nil, fmt.Errorf("type %q is not Weighted or Allocatable — use one of those", div.Type)
	}

	shares := make([]share, len(clusters))
	for i, c := range clusters {
		s := share{name: c.Name, weight: big.NewInt(int64(defaultWeight)), max: unlimited}
		for j, set := range entries {
			if !set.selects(c) {
				continue
			}
			w := div.Weights[j]
			s.weight = big.NewInt(int64(w.Weight))
			if w.MinReplicas != nil {
				s.min = int64(*w.MinReplicas)
			}
			if w.MaxReplicas != nil {
				s.max = int64(*w.MaxReplicas)
			}
			break
		}
		if resource != "" {
			s.weight.Mul(s.weight, capacity(c.Allocatable, resource))
		}
		shares[i] = s
	}
	return shares, nil
}

// capacity is a cluster's allocatable resource as an integer: millicores of
// cpu, bytes of memory; zero when the cluster reports none.
func capacity(alloc corev1.ResourceList, resource corev1.ResourceName) *big.Int {
	q, ok := alloc[resource]
	if !ok || q.Sign() <= 0 {
		return new(big.Int)
	}
	if resource == corev1.ResourceCPU {
		return big.NewInt(q.MilliValue())
	}
	return big.NewInt(q.Value())
}
