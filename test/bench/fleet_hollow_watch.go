package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/url"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// hollowMeta is what a hollow agent reads of every object it is sent: it
// decodes the whole object only when it acts on it, and keeps nothing of
// it but the generation it handled.
type hollowMeta struct {
	Name              string       `json:"name"`
	Namespace         string       `json:"namespace"`
	UID               string       `json:"uid"`
	ResourceVersion   string       `json:"resourceVersion"`
	Generation        int64        `json:"generation"`
	DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
}

// hollowObject is any object, of which only the metadata is decoded.
type hollowObject struct {
	Metadata hollowMeta `json:"metadata"`
}

// hollowList is a list response; its items are decoded one at a time.
type hollowList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// hollowWatchEvent is one event of a watch stream.
type hollowWatchEvent struct {
	Type   watch.EventType `json:"type"`
	Object json.RawMessage `json:"object"`
}

// hollowHandler acts on one object of a watch: its event (Added for the
// items of a list), its metadata, and the object itself, to decode when
// the handler needs more than the metadata.
type hollowHandler func(ctx context.Context, ev watch.EventType, m *hollowMeta, raw json.RawMessage)

// eventBuffers hold one watch event each until it is handled, shared by
// all the watches: a json.Decoder per watch would keep a buffer the size
// of the largest event it read, per watch, for as long as it watches.
var eventBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readWatchEvent reads the next event of a watch stream into a buffer of
// eventBuffers, to put back once handled. The hub's JSON encoder ends
// every event with a newline (and JSON escapes newlines in strings), so
// an event is a line; it reads on past a newline that does not end a
// JSON value, should one ever come.
func readWatchEvent(r *bufio.Reader) (*bytes.Buffer, error) {
	// Wait for the event before taking a buffer: a watch waits nearly
	// all the time, and would hold one while it does.
	if _, err := r.Peek(1); err != nil {
		return nil, err
	}
	buf := eventBuffers.Get().(*bytes.Buffer)
	for {
		line, err := r.ReadSlice('\n')
		buf.Write(line)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			putEventBuffer(buf)
			return nil, err
		case json.Valid(buf.Bytes()):
			return buf, nil
		}
	}
}

func putEventBuffer(buf *bytes.Buffer) {
	buf.Reset()
	eventBuffers.Put(buf)
}

// follow lists what is at path (with query) and then watches it from the
// list's resourceVersion with bookmarks, handing each object to handle,
// and lists again when the watch cannot go on: an informer without a
// cache. The calling goroutine only reads the watch stream; the list,
// the decoding and handle run on the shared workers, so that the
// goroutine, which waits on its watch nearly all the time, keeps a small
// stack.
func (a *hollowAgent) follow(ctx context.Context, what, path string, query url.Values, handle hollowHandler) {
	for attempt := 0; ctx.Err() == nil; attempt++ {
		var rv string
		var err error
		a.sh.workers.run(func() { rv, err = a.listAndHandle(ctx, path, query, handle) })
		if err != nil {
			if ctx.Err() == nil {
				a.sh.failed("list "+what, err)
			}
			if !retry(ctx, attempt) {
				return
			}
			continue
		}
		for ctx.Err() == nil {
			next, ok := a.watchOnce(ctx, what, path, query, rv, handle)
			if !ok {
				break
			}
			rv = next
		}
		attempt = 0
	}
}

// listAndHandle lists what is at path with query, hands every item to
// handle as Added, and returns the list's resourceVersion.
func (a *hollowAgent) listAndHandle(ctx context.Context, path string, query url.Values, handle hollowHandler) (string, error) {
	var list hollowList
	if err := a.hub.get(ctx, path, query, &list); err != nil {
		return "", err
	}
	for _, raw := range list.Items {
		var o hollowObject
		if err := json.Unmarshal(raw, &o); err != nil {
			return "", err
		}
		handle(ctx, watch.Added, &o.Metadata, raw)
	}
	return list.Metadata.ResourceVersion, nil
}

// watchOnce watches from rv until the hub ends the watch, and returns
// the resourceVersion to go on from; false when it cannot go on from
// there (the hub answered with an error, 410 Gone most often) and the
// caller must list again.
func (a *hollowAgent) watchOnce(ctx context.Context, what, path string, query url.Values, rv string, handle hollowHandler) (string, bool) {
	q := url.Values{"resourceVersion": {rv}}
	maps.Copy(q, query)
	// On a worker too: the request's call chain is deep, the reading of
	// its body is not.
	var body io.ReadCloser
	var err error
	a.sh.workers.run(func() { body, err = a.hub.watch(ctx, path, q) })
	if err != nil {
		if ctx.Err() == nil {
			a.sh.failed("watch "+what, err)
		}
		return rv, false
	}
	defer body.Close()
	events := bufio.NewReaderSize(body, 512)
	for {
		buf, err := readWatchEvent(events)
		if err != nil {
			// The hub closed the watch (its timeout) or ctx ended.
			return rv, true
		}
		gone := false
		a.sh.workers.run(func() {
			defer putEventBuffer(buf)
			var ev hollowWatchEvent
			var o hollowObject
			err := json.Unmarshal(buf.Bytes(), &ev)
			if err == nil && ev.Type != watch.Error {
				err = json.Unmarshal(ev.Object, &o)
			}
			switch {
			case ev.Type == watch.Error:
				gone = true
			case err != nil:
				a.sh.failed("watch "+what, err)
				gone = true
			default:
				rv = o.Metadata.ResourceVersion
				if ev.Type != watch.Bookmark {
					handle(ctx, ev.Type, &o.Metadata, ev.Object)
				}
			}
		})
		if gone {
			return rv, false
		}
	}
}

// hollowWorkers run what the hollow agents do on the events of their
// watches, on a few goroutines shared by all agents, each waited for by
// the watch that handed it over. The work decodes JSON and runs the
// agent's status code, which grows a goroutine's stack to tens of KiB.
type hollowWorkers chan func()

func startHollowWorkers(n int) hollowWorkers {
	w := make(hollowWorkers)
	for range n {
		go func() {
			for f := range w {
				f()
			}
		}()
	}
	return w
}

// run runs f on a worker and returns when it did.
func (w hollowWorkers) run(f func()) {
	done := make(chan struct{})
	w <- func() {
		defer close(done)
		f()
	}
	<-done
}
