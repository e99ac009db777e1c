package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub"
)

// rollbackWatch follows one replica set through watches only (its works,
// itself, its ControllerRevisions), so that what the benchmark reads adds
// no request to the hub's figures but the watches'. Its handlers take the
// times: when each cluster first carried the bad image, first failed, and
// was first back on the good revision and Available after that.
type rollbackWatch struct {
	c cache.Cache
	// ns and name are the replica set's.
	ns, name string

	mu sync.Mutex
	// works are what each cluster's work carries now, by cluster.
	works map[string]rollbackWork
	// tookAt, failedAt and backAt are when each cluster's work was first
	// seen with rollbackBad, Degraded on it, and again on good and
	// Available after it took rollbackBad.
	tookAt, failedAt, backAt map[string]time.Time
	// good is the good revision's ControllerRevision name a cluster must
	// carry to be back; "" when the hub keeps no revisions (the image
	// alone then says).
	good string
	// reasons maps each reason of condition RolledBack to when the
	// replica set first said it.
	reasons map[string]time.Time
}

// rollbackWork is what the benchmark needs of one work.
type rollbackWork struct {
	image, revision     string
	generation          int64
	available, degraded bool
}

// watchRollback starts the watches of replica set ns/name until cl runs.
func watchRollback(ctx context.Context, cfg *rest.Config, ns, name string, cl *cleanups) (*rollbackWatch, error) {
	rw := &rollbackWatch{ns: ns, name: name, works: map[string]rollbackWork{},
		tookAt: map[string]time.Time{}, failedAt: map[string]time.Time{}, backAt: map[string]time.Time{}, reasons: map[string]time.Time{}}
	c, err := cache.New(cfg, cache.Options{
		Scheme: hub.Scheme(),
		ByObject: map[client.Object]cache.ByObject{
			&workv1.ManifestWork{}: {Label: labels.SelectorFromSet(labels.Set{workv1.ManifestWorkReplicaSetLabel: ns + "." + name})},
			&workv1alpha1.ManifestWorkReplicaSet{}: {
				Namespaces: map[string]cache.Config{ns: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", name),
			},
			&appsv1.ControllerRevision{}: {Namespaces: map[string]cache.Config{ns: {}}},
		},
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	rw.c = c
	// The ControllerRevisions are read from the cache, without a handler.
	if _, err := c.GetInformer(ctx, &appsv1.ControllerRevision{}); err != nil {
		return nil, err
	}
	handlers := map[client.Object]func(any){
		&workv1.ManifestWork{}:                 rw.observeWork,
		&workv1alpha1.ManifestWorkReplicaSet{}: rw.observeReplicaSet,
	}
	for obj, observe := range handlers {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    observe,
			UpdateFunc: func(_, o any) { observe(o) },
		}); err != nil {
			return nil, err
		}
	}
	watchCtx, stop := context.WithCancel(ctx)
	cl.add(stop)
	go func() { _ = c.Start(watchCtx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the benchmark's watches of replica set %s/%s did not sync", ns, name)
	}
	return rw, nil
}

func (rw *rollbackWatch) observeWork(o any) {
	w, ok := o.(*workv1.ManifestWork)
	if !ok {
		return
	}
	now := time.Now()
	state := rollbackWork{
		image:      workImage(w),
		revision:   w.Annotations[workv1alpha1.RevisionAnnotation],
		generation: w.Generation,
		available:  currentTrue(w, workv1.WorkApplied) && currentTrue(w, workv1.WorkAvailable),
		degraded:   currentTrue(w, workv1.WorkDegraded),
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	cluster := w.Namespace
	rw.works[cluster] = state
	if state.image == rollbackBad {
		if _, ok := rw.tookAt[cluster]; !ok {
			rw.tookAt[cluster] = now
		}
		if _, ok := rw.failedAt[cluster]; !ok && state.degraded {
			rw.failedAt[cluster] = now
		}
	}
	if _, took := rw.tookAt[cluster]; took && rw.isBack(state) {
		if _, ok := rw.backAt[cluster]; !ok {
			rw.backAt[cluster] = now
		}
	}
}

// isBack says whether a work is on the good revision and Available.
func (rw *rollbackWatch) isBack(state rollbackWork) bool {
	return state.image == rollbackGood && state.available && (rw.good == "" || state.revision == rw.good)
}

func (rw *rollbackWatch) observeReplicaSet(o any) {
	mwrs, ok := o.(*workv1alpha1.ManifestWorkReplicaSet)
	if !ok {
		return
	}
	now := time.Now()
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if c := meta.FindStatusCondition(mwrs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionRolledBack); c != nil {
		if _, ok := rw.reasons[c.Reason]; !ok {
			rw.reasons[c.Reason] = now
		}
	}
}

// workImage is the image of the first container of the Deployment a work
// carries, or "".
func workImage(w *workv1.ManifestWork) string {
	if len(w.Spec.Workload.Manifests) == 0 {
		return ""
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Image string `json:"image"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &d) != nil || len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// waitFor waits until ok holds, looking every 50 ms (the watches' state,
// no request).
func (rw *rollbackWatch) waitFor(ctx context.Context, what string, timeout time.Duration, ok func() bool) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return ok(), nil })
	if err != nil {
		return fmt.Errorf("waiting for %s after %s: %w", what, timeout, err)
	}
	return nil
}

// countOn counts the works on image and Available, and on revision
// unless it is "".
func (rw *rollbackWatch) countOn(image, revision string) int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	n := 0
	for _, w := range rw.works {
		if w.image == image && (image == rollbackBad || w.available) && (revision == "" || w.revision == revision) {
			n++
		}
	}
	return n
}

// setGood sets the good revision's name.
func (rw *rollbackWatch) setGood(name string) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.good = name
}

// generations are the works' generations by cluster.
func (rw *rollbackWatch) generations() map[string]int64 {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	out := make(map[string]int64, len(rw.works))
	for c, w := range rw.works {
		out[c] = w.generation
	}
	return out
}

// took are the clusters whose work carried rollbackBad.
func (rw *rollbackWatch) took() map[string]bool {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	out := make(map[string]bool, len(rw.tookAt))
	for c := range rw.tookAt {
		out[c] = true
	}
	return out
}

// firstFailure is when the first cluster was seen failing rollbackBad.
func (rw *rollbackWatch) firstFailure() time.Time {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	var first time.Time
	for _, t := range rw.failedAt {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first
}

// countBack counts the clusters of took that are back on the good
// revision now.
func (rw *rollbackWatch) countBack(took map[string]bool) int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	n := 0
	for c := range took {
		if rw.isBack(rw.works[c]) {
			n++
		}
	}
	return n
}

// lastBack is when the last of took was first seen back.
func (rw *rollbackWatch) lastBack(took map[string]bool) time.Time {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	var last time.Time
	for c := range took {
		if t := rw.backAt[c]; t.After(last) {
			last = t
		}
	}
	return last
}

// untouched counts the clusters of before that never took rollbackBad,
// and of those, the ones whose work's generation changed since.
func (rw *rollbackWatch) untouched(before map[string]int64, took map[string]bool) (n, written int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for c, g := range before {
		if took[c] {
			continue
		}
		n++
		if rw.works[c].generation != g {
			written++
		}
	}
	return n, written
}

// reasonSeen is when the replica set first said reason in condition
// RolledBack, or zero.
func (rw *rollbackWatch) reasonSeen(reason string) time.Time {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.reasons[reason]
}

// condition is the replica set's condition t now, as text.
func (rw *rollbackWatch) condition(t string) string {
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := rw.c.Get(context.Background(), client.ObjectKey{Namespace: rw.ns, Name: rw.name}, mwrs); err != nil {
		return err.Error()
	}
	return conditionString(meta.FindStatusCondition(mwrs.Status.Conditions, t))
}

// revision is the replica set's ControllerRevision numbered number, or nil.
func (rw *rollbackWatch) revision(number int64) *appsv1.ControllerRevision {
	list := &appsv1.ControllerRevisionList{}
	if err := rw.c.List(context.Background(), list, client.InNamespace(rw.ns),
		client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: rw.ns + "." + rw.name}); err != nil {
		return nil
	}
	for i := range list.Items {
		if list.Items[i].Revision == number {
			return &list.Items[i]
		}
	}
	return nil
}
