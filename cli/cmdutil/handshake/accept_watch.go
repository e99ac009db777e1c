package handshake

import (
	"context"
	"errors"
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// acceptWatch holds the hub's cluster CSRs and ManagedClusters for accept
// --wait over a fleet: one list of each, then their watches. A fleet
// joining at once is waited for in rounds; reading the whole hub again
// each round made every round cost the hub a list of N CSRs and N
// ManagedClusters, so accepting N clusters cost it O(N²).
//
// The copies lag the hub by a watch event. What this process wrote itself
// (a CSR approved, hubAcceptsClient set) is remembered, so that a round
// that still sees the old copy does not write it again.
type acceptWatch struct {
	csrs, clusters cache.SharedIndexInformer

	mu sync.Mutex
	// err is the last error of either watch, until it lists again.
	err error
	// written are the writes this process made (csrWrite, clusterWrite).
	written map[string]bool
}

// startAcceptWatch lists and watches the hub's cluster CSRs and
// ManagedClusters until ctx ends.
func startAcceptWatch(ctx context.Context, c *cmdutil.Clients) (*acceptWatch, error) {
	hasCluster, err := labels.NewRequirement(clusterv1.ClusterNameLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	selector := labels.NewSelector().Add(*hasCluster).String()
	csrs := c.Kube.CertificatesV1().CertificateSigningRequests()
	wc, err := client.NewWithWatch(c.Config, client.Options{Scheme: cmdutil.Scheme})
	if err != nil {
		return nil, err
	}
	w := &acceptWatch{written: map[string]bool{}}
	w.csrs = cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.LabelSelector = selector
			return csrs.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = selector
			return csrs.Watch(ctx, opts)
		},
	}, &certificatesv1.CertificateSigningRequest{}, 0, cache.Indexers{})
	w.clusters = cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &clusterv1.ManagedClusterList{}
			return list, wc.List(ctx, list, &client.ListOptions{Raw: &opts})
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return wc.Watch(ctx, &clusterv1.ManagedClusterList{}, &client.ListOptions{Raw: &opts})
		},
	}, &clusterv1.ManagedCluster{}, 0, cache.Indexers{})
	for _, inf := range []cache.SharedIndexInformer{w.csrs, w.clusters} {
		// The rounds report the hub's errors; client-go would log them.
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
		}); err != nil {
			return nil, err
		}
		go inf.RunWithContext(ctx)
	}
	return w, nil
}

// snapshot returns the CSRs and ManagedClusters of names as last seen, or
// the error that keeps the watches from having seen them yet.
func (w *acceptWatch) snapshot(names []string) (*acceptSnapshot, error) {
	if !w.csrs.HasSynced() || !w.clusters.HasSynced() {
		w.mu.Lock()
		err := w.err
		w.mu.Unlock()
		if err == nil {
			err = errNotListedYet
		}
		return nil, err
	}
	snap := &acceptSnapshot{csrs: map[string][]certificatesv1.CertificateSigningRequest{}, clusters: map[string]*clusterv1.ManagedCluster{}}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	for _, o := range w.csrs.GetStore().List() {
		csr := o.(*certificatesv1.CertificateSigningRequest)
		if name := csr.Labels[clusterv1.ClusterNameLabel]; want[name] {
			// Read only: the writes copy what they change.
			snap.csrs[name] = append(snap.csrs[name], *csr)
		}
	}
	for _, o := range w.clusters.GetStore().List() {
		mc := o.(*clusterv1.ManagedCluster)
		if want[mc.Name] {
			snap.clusters[mc.Name] = mc
		}
	}
	return snap, nil
}

// errNotListedYet is a round's error while the first lists have not
// come back: the hub is slow to answer them.
var errNotListedYet = errors.New("the hub has not answered the first list of CSRs and ManagedClusters yet")

// csrWrite and clusterWrite name what this process wrote: a CSR it
// approved, a ManagedCluster (by UID) it accepted.
func csrWrite(name string) string       { return "csr/" + name }
func clusterWrite(uid types.UID) string { return "managedcluster/" + string(uid) }

// wrote records that this process made the write named key.
func (w *acceptWatch) wrote(key string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.written[key] = true
	w.mu.Unlock()
}

// wroteHere says whether this process made the write named key.
func (w *acceptWatch) wroteHere(key string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written[key]
}
