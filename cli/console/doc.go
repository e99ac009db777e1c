// Package console serves `flotilla console`: a web console of the hub on
// 127.0.0.1, with the caller's own hub credentials.
//
// It keeps informers (controller-runtime's cache) of the kinds it shows,
// each as wide as the caller's RBAC allows: cluster-wide where they may
// list and watch it everywhere, else in the namespaces where they may, else
// not at all. Views are Go templates rendered from those caches on each
// request; every change an informer sees is announced to the open pages
// over server-sent events, and a page then fetches its own view again and
// swaps it in. Search (the box in every page's header, /search?q=) is the
// one view not read from the caches: it asks the hub's search index, with
// the same credentials, so it lists the objects of the clusters the hub lets
// the caller see. A rollout's revisions (ControllerRevisions) and a
// namespace's events are read on request too: the hub holds too many of
// both to keep informers of. Actions (accept, deny, pause, resume, inform/enforce) are
// form posts written with the same credentials, so the hub's RBAC and
// admission decide, and a refusal shows the hub's message.
//
// Access needs the one-time secret in the URL that the command prints: its
// first use sets a session cookie and the secret is spent. Every request
// must carry that cookie and name 127.0.0.1 or localhost as its host; every
// action must also carry the session's CSRF token and come from the
// console's own origin. All assets are embedded; the page loads nothing
// from elsewhere.
package console
