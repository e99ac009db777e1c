package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

// eventBuffers hold one watch event each while it is decoded, shared by
// all the watches: a json.Decoder per watch would keep a buffer the size
// of the largest event it read, per watch, for as long as it watches.
var eventBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readWatchEvent reads the next event of a watch stream into ev. The
// hub's JSON encoder ends every event with a newline (and JSON escapes
// newlines in strings), so an event is a line; it reads on past a
// newline that does not end a JSON value, should one ever come.
func readWatchEvent(r *bufio.Reader, ev *hollowWatchEvent) error {
	buf := eventBuffers.Get().(*bytes.Buffer)
	defer func() {
		buf.Reset()
		eventBuffers.Put(buf)
	}()
	for {
		line, err := r.ReadSlice('\n')
		buf.Write(line)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return err
		case json.Valid(buf.Bytes()):
			return json.Unmarshal(buf.Bytes(), ev)
		}
	}
}

// follow lists what query selects at path and then watches it from the
// list's resourceVersion with bookmarks, handing each object to handle,
// and lists again when the watch cannot go on: an informer without a
// cache, in the calling goroutine. Each event is decoded as it comes and
// dropped once handled.
func (a *hollowAgent) follow(ctx context.Context, what, path string, query url.Values, handle hollowHandler) {
	for attempt := 0; ctx.Err() == nil; attempt++ {
		var list hollowList
		if err := a.hub.get(ctx, path, query, &list); err != nil {
			if ctx.Err() == nil {
				a.sh.failed("list "+what, err)
			}
			if !retry(ctx, attempt) {
				return
			}
			continue
		}
		for _, raw := range list.Items {
			var o hollowObject
			if err := json.Unmarshal(raw, &o); err != nil {
				a.sh.failed("list "+what, err)
				continue
			}
			handle(ctx, watch.Added, &o.Metadata, raw)
		}
		rv := list.Metadata.ResourceVersion
		list = hollowList{}
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

// watchOnce watches from rv until the hub ends the watch, and returns
// the resourceVersion to go on from; false when it cannot go on from
// there (the hub answered with an error, 410 Gone most often) and the
// caller must list again.
func (a *hollowAgent) watchOnce(ctx context.Context, what, path string, query url.Values, rv string, handle hollowHandler) (string, bool) {
	q := url.Values{"resourceVersion": {rv}}
	for k, v := range query {
		q[k] = v
	}
	body, err := a.hub.watch(ctx, path, q)
	if err != nil {
		if ctx.Err() == nil {
			a.sh.failed("watch "+what, err)
		}
		return rv, false
	}
	defer body.Close()
	events := bufio.NewReaderSize(body, 512)
	for {
		var ev hollowWatchEvent
		if err := readWatchEvent(events, &ev); err != nil {
			// The hub closed the watch (its timeout) or ctx ended.
			return rv, true
		}
		if ev.Type == watch.Error {
			return rv, false
		}
		var o hollowObject
		if err := json.Unmarshal(ev.Object, &o); err != nil {
			a.sh.failed("watch "+what, err)
			return rv, false
		}
		rv = o.Metadata.ResourceVersion
		if ev.Type != watch.Bookmark {
			handle(ctx, ev.Type, &o.Metadata, ev.Object)
		}
	}
}
