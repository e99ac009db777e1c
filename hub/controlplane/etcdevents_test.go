package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
)

// liveHeap is the test process's live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestEtcdLetsGoOfTheEventsOfItsLastWatchCatchUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, _, err := startEtcd(ctx, "test", filepath.Join(t.TempDir(), "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := v3client.New(e.Server)
	defer c.Close()

	// 32 MiB of values, 1 MiB a transaction.
	const txns, perTxn, size = 32, 16, 64 << 10
	value := strings.Repeat("x", size)
	for i := range txns {
		ops := make([]clientv3.Op, perTxn)
		for j := range ops {
			ops[j] = clientv3.OpPut(fmt.Sprintf("/burst/%02d/%02d", i, j), value)
		}
		if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	before := liveHeap()

	// A watch from the first revision, as the API server starts one from
	// the revision its client last saw: etcd catches it up, reading every
	// event since.
	wctx, wcancel := context.WithCancel(ctx)
	w := c.Watch(wctx, "/burst/", clientv3.WithPrefix(), clientv3.WithRev(1))
	for seen := 0; seen < txns*perTxn; {
		resp, ok := <-w
		if !ok {
			t.Fatalf("the watch ended after %d of %d events: %v", seen, txns*perTxn, resp.Err())
		}
		seen += len(resp.Events)
	}
	wcancel()
	for range w {
	}
	// Something is written after, as the hub writes all the time.
	if _, err := c.Put(ctx, "/after", "1"); err != nil {
		t.Fatal(err)
	}
	kept := int64(liveHeap()) - int64(before)
	// etcd keeps what it read for the next catch-up: should it stop
	// doing so, releaseCatchUp is no longer needed. A busy machine may
	// make the watch a slow reader, whose events etcd then sends in more
	// than one catch-up, keeping only the last one's: a third will do.
	if kept < txns*perTxn*size/3 {
		t.Fatalf("etcd kept %d MiB after the catch-up, want at least a third of the %d MiB it read: does it still keep them?", kept>>20, txns*perTxn*size>>20)
	}

	done := make(chan struct{})
	rctx, rcancel := context.WithCancel(ctx)
	go func() {
		defer close(done)
		releaseCatchUp(rctx, e.Server.KV(), 10*time.Millisecond)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := int64(liveHeap()) - int64(before)
		if left < kept/4 {
			t.Logf("kept %d MiB after the catch-up, %d MiB once released", kept>>20, left>>20)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd still keeps %d MiB of the %d MiB it read after 10 s of releaseCatchUp", left>>20, kept>>20)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rcancel()
	<-done
}
