package search

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// change is an object's last state to send: its compact form, or its
// deletion.
type change struct {
	upsert *searchv1alpha1.Object
	delete *searchv1alpha1.ObjectRef
	// gen orders the changes of one UID: a change sent is taken off only
	// if no newer one came while it was in flight.
	gen uint64
}

// pending holds the changes not yet acknowledged by the hub, one per UID:
// however fast objects change, it holds at most one entry per object.
type pending struct {
	mu      sync.Mutex
	changes map[types.UID]change
	gen     uint64
	// wake has a value when changes wait.
	wake chan struct{}
}

func newPending() *pending {
	return &pending{changes: map[types.UID]change{}, wake: make(chan struct{}, 1)}
}

func (p *pending) upsert(o searchv1alpha1.Object) {
	p.put(o.UID, change{upsert: &o})
}

func (p *pending) delete(ref searchv1alpha1.ObjectRef) {
	p.put(ref.UID, change{delete: &ref})
}

func (p *pending) put(uid types.UID, c change) {
	p.mu.Lock()
	p.gen++
	c.gen = p.gen
	p.changes[uid] = c
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// len is how many objects have changes to send.
func (p *pending) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.changes)
}

// take returns a batch of at most maxObjects changes and about maxBytes
// of objects, and the generations to pass to done once the hub has it.
func (p *pending) take(maxObjects, maxBytes int) (searchv1alpha1.ChangeBatch, map[types.UID]uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b searchv1alpha1.ChangeBatch
	gens := make(map[types.UID]uint64, min(len(p.changes), maxObjects))
	size := 0
	for uid, c := range p.changes {
		if len(gens) == maxObjects || size >= maxBytes {
			break
		}
		if c.upsert != nil {
			b.Upserts = append(b.Upserts, *c.upsert)
			size += objectSize(c.upsert)
		} else {
			b.Deletes = append(b.Deletes, *c.delete)
			size += 64 + len(c.delete.Resource) + len(c.delete.Group)
		}
		gens[uid] = c.gen
	}
	return b, gens
}

// done takes the changes the hub acknowledged off, unless newer ones
// replaced them.
func (p *pending) done(gens map[types.UID]uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, gen := range gens {
		if c, ok := p.changes[uid]; ok && c.gen == gen {
			delete(p.changes, uid)
		}
	}
}

// objectSize estimates the bytes of o's JSON, to keep batches near
// maxBatchBytes without encoding each object twice.
func objectSize(o *searchv1alpha1.Object) int {
	n := 200 + len(o.Group) + len(o.Version) + len(o.Resource) + len(o.Kind) + len(o.Namespace) + len(o.Name) + len(o.UID) + len(o.ResourceVersion) + len(o.Status)
	for k, v := range o.Labels {
		n += len(k) + len(v) + 6
	}
	for _, i := range o.Images {
		n += len(i) + 3
	}
	for k, v := range o.Conditions {
		n += len(k) + len(v) + 6
	}
	for k, v := range o.Fields {
		n += len(k) + len(v) + 6
	}
	if o.Owner != nil {
		n += 40 + len(o.Owner.Kind) + len(o.Owner.Name) + len(o.Owner.UID)
	}
	return n
}
