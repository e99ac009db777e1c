package render

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// divisionCase is one random division problem; each cluster has its own
// weights entry, so the test knows every cluster's weight and limits.
type divisionCase struct {
	total    int32
	clusters []Cluster
	weights  []workv1alpha1.ClusterWeight // weights[i] is clusters[i]'s
}

// randomCase draws a division problem. Sizes and limits are small enough
// that feasible and infeasible problems both come up often.
func randomCase(r *rand.Rand) divisionCase {
	n := r.Intn(9)
	if r.Intn(10) == 0 {
		n = 20 + r.Intn(200)
	}
	c := divisionCase{total: int32(r.Intn(4*n + 10))}
	if r.Intn(8) == 0 {
		c.total = int32(r.Intn(100000))
	}
	for i := range n {
		name := fmt.Sprintf("cluster-%03d", r.Intn(1000)*1000+i) // unique, in random order
		c.clusters = append(c.clusters, Cluster{Name: name})
		w := workv1alpha1.ClusterWeight{ClusterNames: []string{name}, Weight: int32(r.Intn(6))}
		if r.Intn(5) == 0 {
			w.Weight = 0
		}
		if r.Intn(3) == 0 {
			w.MinReplicas = ptr.To(int32(r.Intn(5)))
		}
		if r.Intn(3) == 0 {
			lo := int32(0)
			if w.MinReplicas != nil {
				lo = *w.MinReplicas
			}
			w.MaxReplicas = ptr.To(lo + int32(r.Intn(8)))
		}
		c.weights = append(c.weights, w)
	}
	return c
}

// limits returns a cluster's min and max, max -1 for none.
func limits(w workv1alpha1.ClusterWeight) (int64, int64) {
	lo, hi := int64(0), int64(-1)
	if w.MinReplicas != nil {
		lo = int64(*w.MinReplicas)
	}
	if w.MaxReplicas != nil {
		hi = int64(*w.MaxReplicas)
	}
	return lo, hi
}

// isFeasible is the API's rule, stated independently of the algorithm: the
// mins fit in the total, and the clusters that can take more than their min
// (weight above 0) have room for the rest.
func (c divisionCase) isFeasible() bool {
	var sumMin, room int64
	unbounded := false
	for _, w := range c.weights {
		lo, hi := limits(w)
		sumMin += lo
		switch {
		case w.Weight == 0:
			room += lo
		case hi < 0:
			unbounded = true
		default:
			room += hi
		}
	}
	total := int64(c.total)
	return sumMin <= total && (unbounded || room >= total)
}

func TestDivideProperties(t *testing.T) {
	seeds := []int64{1, 2, 3, 5, 8, 13, 21, 34, 55, 89}
	for i := range 10 {
		seeds = append(seeds, rand.Int63()+int64(i)) // new draws each run, reported on failure
	}
	feasible, infeasible := 0, 0
	for _, seed := range seeds {
		r := rand.New(rand.NewSource(seed))
		for i := range 60 {
			c := randomCase(r)
			where := fmt.Sprintf("seed %d case %d (total %d, %d clusters)", seed, i, c.total, len(c.clusters))
			if c.isFeasible() {
				feasible++
			} else {
				infeasible++
			}
			checkDivision(t, where, c)
		}
	}
	t.Logf("%d feasible and %d infeasible divisions checked", feasible, infeasible)
	if feasible < 100 || infeasible < 100 {
		t.Errorf("the generator drew %d feasible and %d infeasible cases; both should be common", feasible, infeasible)
	}
}

// checkDivision checks every property of one division problem.
func checkDivision(t *testing.T, where string, c divisionCase) {
	t.Helper()
	div := &workv1alpha1.ReplicaDivision{Weights: c.weights}
	got, err := Divide(div, c.total, c.clusters)
	if !c.isFeasible() {
		if err == nil {
			t.Errorf("%s: infeasible, yet Divide returned %v", where, got)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: feasible, yet Divide failed: %v", where, err)
		return
	}
	sum := int64(0)
	var sumW int64
	binds := false
	for i, cl := range c.clusters {
		n := int64(got[cl.Name])
		sum += n
		lo, hi := limits(c.weights[i])
		if n < lo || (hi >= 0 && n > hi) {
			t.Errorf("%s: %s got %d, outside [%d, %d]", where, cl.Name, n, lo, hi)
		}
		if c.weights[i].Weight == 0 && n != lo {
			t.Errorf("%s: %s weighs 0 and got %d, not its min %d", where, cl.Name, n, lo)
		}
		sumW += int64(c.weights[i].Weight)
		if lo > 0 || hi >= 0 {
			binds = true
		}
	}
	if sum != int64(c.total) {
		t.Errorf("%s: counts add up to %d, not %d: %v", where, sum, c.total, got)
	}

	// No cluster holds a replica that another, with room, deserves more:
	// a replica moved from i to j never brings both closer to one level.
	for i, a := range c.clusters {
		for j, b := range c.clusters {
			wi, wj := int64(c.weights[i].Weight), int64(c.weights[j].Weight)
			loI, _ := limits(c.weights[i])
			_, hiJ := limits(c.weights[j])
			xi, xj := int64(got[a.Name]), int64(got[b.Name])
			if i == j || wi == 0 || wj == 0 || xi <= loI || (hiJ >= 0 && xj >= hiJ) {
				continue
			}
			if (xi-1)*wj >= (xj+1)*wi {
				t.Errorf("%s: %s (weight %d) got %d while %s (weight %d) got %d and has room", where, a.Name, wi, xi, b.Name, wj, xj)
			}
		}
	}

	// Without limits, each count is within one replica of its exact share.
	if !binds && sumW > 0 {
		for i, cl := range c.clusters {
			exactTimesW := int64(c.total) * int64(c.weights[i].Weight) // share = exactTimesW / sumW
			n := int64(got[cl.Name])
			if n*sumW-exactTimesW >= sumW || exactTimesW-n*sumW >= sumW {
				t.Errorf("%s: %s got %d, not within 1 of %d·%d/%d", where, cl.Name, n, c.total, c.weights[i].Weight, sumW)
			}
		}
	}

	// Deterministic, and independent of the order clusters come in.
	again, err := Divide(div, c.total, reversed(c.clusters))
	if err != nil || !cmp.Equal(got, again) {
		t.Errorf("%s: reversed input gave %v (%v), first call %v", where, again, err, got)
	}
}

// reversed returns the clusters in reverse order.
func reversed(in []Cluster) []Cluster {
	out := make([]Cluster, len(in))
	for i, c := range in {
		out[len(in)-1-i] = c
	}
	return out
}
