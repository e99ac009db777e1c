package main

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// hubRequests reads the API requests the hub served so far, by verb and
// resource ("LIST managedclusters"; subresources after a slash; conflicts,
// refusals by priority and fairness and by the authorizer counted apart), from
// apiserver_request_total on its /metrics: the same in both simulator
// modes, so that they can be set side by side.
func hubRequests(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	body, err := hubMetrics(ctx, cfg)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for l, v := range samples(body, "apiserver_request_total") {
		if l["resource"] == "" {
			continue
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		switch l["code"] {
		case "409":
			// Conflicts apart: each is a write that was computed again.
			key += " (409 Conflict)"
		case "429":
			// Refused by priority and fairness, to be sent again.
			key += " (429 Too Many Requests)"
		case "403":
			// Refused by the authorizer: an agent asking before its
			// cluster's RBAC is in place, most often.
			key += " (403 Forbidden)"
		}
		out[key] += v
	}
	return out, nil
}

// watchCacheHistory is one resource's watch cache on the hub: the events
// it has received and how many of the latest it keeps for watches to
// resume from (its capacity; all of it once that many have arrived).
type watchCacheHistory struct {
	resource         string
	capacity, events float64
}

// kept is how many events the history holds (unless the cache started
// again since, when it holds fewer).
func (c watchCacheHistory) kept() float64 { return min(c.capacity, c.events) }

// hubWatchCaches reads, from the hub's /metrics (body), the watch caches that
// keep least events or more, most first. The API server grows a
// cache's history while events arrive faster than it keeps them for, and
// shrinks it only when a later event arrives (kubernetes/kubernetes#139250):
// after a burst and then silence, a steady state still holds the burst.
func hubWatchCaches(body string, least float64) []watchCacheHistory {
	events := map[string]float64{}
	for l, v := range samples(body, "apiserver_watch_cache_events_received_total") {
		events[l["group"]+"/"+l["resource"]] += v
	}
	var out []watchCacheHistory
	for l, v := range samples(body, "watch_cache_capacity") {
		if c := (watchCacheHistory{resource: l["resource"], capacity: v, events: events[l["group"]+"/"+l["resource"]]}); c.kept() >= least {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b watchCacheHistory) int {
		return cmp.Or(cmp.Compare(b.kept(), a.kept()), strings.Compare(a.resource, b.resource))
	})
	return out
}

// hubMetrics reads the hub API server's /metrics.
func hubMetrics(ctx context.Context, cfg *rest.Config) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	body, err := dc.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read the hub's /metrics: %w", err)
	}
	return string(body), nil
}

// samples yields the labels and value of each sample of the metric name
// in a Prometheus text exposition.
func samples(body, name string) iter.Seq2[map[string]string, float64] {
	return func(yield func(map[string]string, float64) bool) {
		for line := range strings.Lines(body) {
			rest, ok := strings.CutPrefix(line, name+"{")
			if !ok {
				continue
			}
			labels, value, ok := strings.Cut(rest, "} ")
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				continue
			}
			l := map[string]string{}
			for kv := range strings.SplitSeq(labels, ",") {
				k, val, _ := strings.Cut(kv, "=")
				l[k] = strings.Trim(val, `"`)
			}
			if !yield(l, v) {
				return
			}
		}
	}
}

// count is a figure by what it counts: requests of a verb and resource,
// watches of a resource.
type count struct {
	key string
	n   float64
}

// sortCounts sorts counts most first, then by key.
func sortCounts(counts []count) {
	slices.SortFunc(counts, func(a, b count) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.key, b.key))
	})
}

// printRequests prints the requests served between two readings, by verb
// and resource, most first, those under min left out; with per > 0, each
// also divided by per (the clusters a fan-out reached).
func printRequests(what string, before, after map[string]float64, min float64, per int) {
	var counts []count
	var total float64
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			total += d
			if d >= min {
				counts = append(counts, count{k, d})
			}
		}
	}
	sortCounts(counts)
	figure := func(n float64) string {
		if per <= 0 {
			return fmt.Sprintf("%.0f", n)
		}
		return fmt.Sprintf("%.0f (%.2f per cluster)", n, n/float64(per))
	}
	row(what+": hub API requests", figure(total), "")
	for _, c := range counts {
		row("      "+c.key, figure(c.n), "")
	}
}

// hubOpenWatches reads, from the hub's /metrics (body), the watches open on it
// by resource (apiserver_longrunning_requests), most first: each holds an
// HTTP/2 stream, its handler and, for a resource read from etcd rather
// than the watch cache, etcd's watch too, each with goroutines and their
// stacks.
func hubOpenWatches(body string) []count {
	open := map[string]float64{}
	for l, v := range samples(body, "apiserver_longrunning_requests") {
		if l["verb"] == "WATCH" && l["resource"] != "" {
			open[l["resource"]] += v
		}
	}
	var watches []count
	for k, v := range open {
		watches = append(watches, count{k, v})
	}
	sortCounts(watches)
	return watches
}
