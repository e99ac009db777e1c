package work

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/reconcile"
)

// stateStore remembers, per work, what the agent last did on the spoke, so
// that a resync of a work whose objects did not change costs no request.
// It is a cache: a restarted agent starts empty and reads the spoke again.
type stateStore struct {
	mu    sync.Mutex
	works map[string]*workState
}

// workState is what the agent remembers of one work. Only the work's own
// reconcile touches it (the controller never runs two at once).
type workState struct {
	// applied is the AppliedManifestWork as last read or written.
	applied *workv1.AppliedManifestWork
	// manifests are the objects as last applied or read, by identity.
	manifests map[objectKey]*manifestState
	// failures counts passes in a row in which a manifest failed.
	failures int
	// written is the work's resourceVersion after the agent's last pass,
	// its own writes (finalizer, status) included: a cached copy older
	// than that lacks the agent's own status, and a pass on it would only
	// write that status again.
	written reconcile.LastWrite
}

// manifestState is one object as the agent last left it.
type manifestState struct {
	// hash is the manifest's hash; resourceVersion the object's after the pass.
	hash, resourceVersion string
	// generation is the work's generation at the time.
	generation int64
	// status is what the pass reported for the manifest.
	status workv1.ManifestCondition
	// owned says the object carries the AppliedManifestWork's ownerReference.
	owned bool
	// heldBy is the work that held the object, when another than this one.
	heldBy *holder
}

// objectKey identifies an object on the spoke.
type objectKey struct {
	schema.GroupVersionResource
	Namespace, Name string
}

// identity is how AppliedManifestWork entries and orphaning rules name an
// object: without its version.
func (k objectKey) identity() workv1.ResourceIdentifier {
	return workv1.ResourceIdentifier{Group: k.Group, Resource: k.Resource, Namespace: k.Namespace, Name: k.Name}
}

func newStateStore() *stateStore { return &stateStore{works: map[string]*workState{}} }

// get returns the state of work name, making it on first use.
func (s *stateStore) get(name string) *workState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.works[name]
	if st == nil {
		st = &workState{manifests: map[objectKey]*manifestState{}}
		s.works[name] = st
	}
	return st
}

// forget drops the state of work name.
func (s *stateStore) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.works, name)
}
