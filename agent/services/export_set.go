package services

import (
	"context"
	"sync"

	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// setImports follows the ImportedServices of the cluster's set on the
// hub, for the export side's Ready condition: which generation of each of
// the cluster's ExportedServices the hub has merged. It keeps only the
// clusters' names and generations (not their endpoints), and moves its
// watch to another set's namespace when the cluster changes sets.
type setImports struct {
	hub *rest.Config
	// changed is told the namespace and name of each service whose
	// ImportedService changed, and ("", "") when the set did.
	changed func(namespace, name string)

	mu     sync.Mutex
	set    string
	reader client.Reader
	synced toolscache.InformerSynced
	stop   context.CancelFunc
}

// importState is what setImports knows of an ImportedService.
type importState int

const (
	// importNoSet: the cluster is in no cluster set.
	importNoSet importState = iota
	// importNotSynced: the set's ImportedServices cannot be read yet (the
	// hub grants that once the cluster is a member).
	importNotSynced
	// importMissing: the set has no ImportedService of the service.
	importMissing
	// importFound: the ImportedService is returned.
	importFound
)

// follow watches set's ImportedServices from now on ("" for none).
func (s *setImports) follow(ctx context.Context, set string) {
	if s.moveTo(ctx, set) {
		// Told without the lock: what is told may read the caches, which
		// can wait for them to sync, and get and close take the lock.
		s.changed("", "")
	}
}

// moveTo watches set's ImportedServices instead of the set before, and
// says whether that changed anything.
func (s *setImports) moveTo(ctx context.Context, set string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if set == s.set && (s.stop != nil || set == "") {
		return false
	}
	if s.stop != nil {
		s.stop()
		s.stop, s.reader, s.synced = nil, nil, nil
	}
	s.set = set
	if set == "" {
		return true
	}
	logger := klog.FromContext(ctx).WithValues("clusterSet", set, "namespace", mcs.SetNamespace(set))
	c, err := cache.New(s.hub, cache.Options{
		Scheme:            exportHubScheme,
		Mapper:            exportHubMapper(),
		DefaultNamespaces: map[string]cache.Config{mcs.SetNamespace(set): {}},
		DefaultTransform:  stripImportedService,
	})
	if err != nil {
		logger.Error(err, "Cannot watch the cluster set's ImportedServices")
		return true
	}
	cctx, cancel := context.WithCancel(ctx)
	inf, err := c.GetInformer(cctx, &mcsv1alpha1.ImportedService{}, cache.BlockUntilSynced(false))
	if err != nil {
		cancel()
		logger.Error(err, "Cannot watch the cluster set's ImportedServices")
		return true
	}
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.notify(obj) },
		UpdateFunc: func(_, obj any) { s.notify(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			s.notify(obj)
		},
	})
	go func() {
		if err := c.Start(cctx); err != nil && cctx.Err() == nil {
			logger.Error(err, "The watch of the cluster set's ImportedServices stopped")
		}
	}()
	logger.V(1).Info("Following the cluster set's ImportedServices")
	s.stop, s.reader, s.synced = cancel, c, inf.HasSynced
	return true
}

func (s *setImports) notify(obj any) {
	if is, ok := obj.(*mcsv1alpha1.ImportedService); ok {
		s.changed(is.Spec.Namespace, is.Spec.Name)
	}
}

// close stops the watch.
func (s *setImports) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// get returns the set and what it knows of the ImportedService of
// Service namespace/name.
func (s *setImports) get(ctx context.Context, namespace, name string) (string, importState, *mcsv1alpha1.ImportedService) {
	s.mu.Lock()
	set, reader, synced := s.set, s.reader, s.synced
	s.mu.Unlock()
	switch {
	case set == "":
		return set, importNoSet, nil
	case reader == nil || !synced():
		return set, importNotSynced, nil
	}
	is := &mcsv1alpha1.ImportedService{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: mcs.SetNamespace(set), Name: mcs.ObjectName(namespace, name)}, is); err != nil {
		return set, importMissing, nil
	}
	return set, importFound, is
}

// stripImportedService keeps of an ImportedService what the export side
// reads: its service, and the names and generations of its clusters.
func stripImportedService(obj any) (any, error) {
	is, ok := obj.(*mcsv1alpha1.ImportedService)
	if !ok {
		return obj, nil
	}
	out := &mcsv1alpha1.ImportedService{ObjectMeta: is.ObjectMeta}
	out.ManagedFields = nil
	out.Spec.ClusterSet, out.Spec.Namespace, out.Spec.Name = is.Spec.ClusterSet, is.Spec.Namespace, is.Spec.Name
	for _, c := range is.Spec.Clusters {
		out.Spec.Clusters = append(out.Spec.Clusters, mcsv1alpha1.ImportedCluster{Name: c.Name, Generation: c.Generation, Available: c.Available})
	}
	return out, nil
}
