package controlplane

import (
	"context"
	"time"

	"go.etcd.io/etcd/server/v3/storage/mvcc"
)

// releaseCatchUpEvery is how often the embedded etcd is made to let go of
// the events of its last watch catch-up.
const releaseCatchUpEvery = 30 * time.Second

// releaseCatchUpKey is the key of the watches releaseCatchUp starts; no
// one writes it, and it is outside the API server's prefix.
var releaseCatchUpKey = []byte("/flotilla-hub/release-watch-catch-up")

// releaseCatchUp makes etcd let go of the events it read to catch up its
// last watches that started behind, every period until ctx ends.
//
// A watch that starts from an older revision than etcd's current one (the
// API server's watches of what it does not cache start from the revision
// their client last saw) is caught up by a loop that reads every event of
// every key since that revision and keeps the slice it read, to reuse for
// the next catch-up, until a watch starts behind again (etcd v3.6,
// storage/mvcc: syncWatchersLoop and rangeEventsWithReuse). After a burst
// of writes that can be thousands of objects, kept for as long as every
// watch stays caught up: 88 MiB of one hub's 466 MiB of live heap at
// 1,000 clusters. Every period, releaseCatchUp starts a watch of a key no
// one writes from the current revision, which etcd then catches up
// reading only the revisions since, and drops the slice it kept; the
// watch before it is cancelled. It costs etcd one watch and a read of a
// period's revisions.
func releaseCatchUp(ctx context.Context, kv mvcc.WatchableKV, every time.Duration) {
	ws := kv.NewWatchStream()
	drained := make(chan struct{})
	defer func() {
		ws.Close()
		<-drained
	}()
	go func() {
		// Nothing is ever written to the key: this only keeps the
		// stream's channel from filling should etcd answer anyway.
		for range ws.Chan() {
		}
		close(drained)
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	var last mvcc.WatchID
	watching := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if watching {
			_ = ws.Cancel(last)
		}
		id, err := ws.Watch(0, releaseCatchUpKey, nil, ws.Rev())
		last, watching = id, err == nil
	}
}
