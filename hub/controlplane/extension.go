package controlplane

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// Extension serves paths of its own from the embedded API server, behind
// the server's authentication, impersonation, audit and authorization
// filters: the request's user is in its context when Handler runs.
type Extension struct {
	// Prefix is the path the handler serves, and every path below it.
	Prefix string
	// Handler serves requests under Prefix.
	Handler http.Handler
	// Serves, when set, says which requests under Prefix Handler serves;
	// the others go on to the API server's own handlers (the custom
	// resources of a group the extension shares).
	Serves func(r *http.Request) bool
	// LongRunning says which of its requests hold their connection open
	// (watches, upgrades): the API server sets them no deadline and keeps
	// them out of its in-flight limits.
	LongRunning func(r *http.Request, info *apirequest.RequestInfo) bool
	// Authorizer wraps the API server's authorizer (the one Options'
	// Authorizer and RBAC make): it decides about the extension's requests
	// and hands every other request to next.
	Authorizer func(next authorizer.Authorizer) authorizer.Authorizer
}

// applyExtensions puts the extensions' authorizers and long-running checks
// into the configs of every server of the chain; serveExtensions puts
// their handlers in front of the outermost one's.
func applyExtensions(exts []Extension, configs ...*genericapiserver.Config) {
	for _, ext := range exts {
		for _, c := range configs {
			if ext.Authorizer != nil {
				c.Authorization.Authorizer = ext.Authorizer(c.Authorization.Authorizer)
			}
			if ext.LongRunning != nil && c.LongRunningFunc != nil {
				next, own := c.LongRunningFunc, ext.LongRunning
				c.LongRunningFunc = func(r *http.Request, info *apirequest.RequestInfo) bool {
					return own(r, info) || next(r, info)
				}
			}
		}
	}
}

// serveExtensions puts the extensions' handlers into the outermost
// server's handler chain, behind its filters (authentication, audit,
// authorization: every request passes them) and in front of its path
// mux. Not in the mux: the aggregator registers the prefix of every API
// group version it serves there once the group is served, and the last
// registration wins, so an extension under the prefix of a group that
// also has custom resources (search.flotilla.io: SearchConfig) would be
// replaced.
func serveExtensions(exts []Extension, outermost *genericapiserver.Config) {
	if len(exts) == 0 {
		return
	}
	build := outermost.BuildHandlerChainFunc
	outermost.BuildHandlerChainFunc = func(api http.Handler, c *genericapiserver.Config) http.Handler {
		return build(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, ext := range exts {
				if strings.HasPrefix(r.URL.Path, ext.Prefix) && (ext.Serves == nil || ext.Serves(r)) {
					ext.Handler.ServeHTTP(w, r)
					return
				}
			}
			api.ServeHTTP(w, r)
		}), c)
	}
}
