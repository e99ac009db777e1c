package controlplane

import (
	"net/http"

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
// into the configs of every server of the chain; their handlers are added
// once the chain is built (serveExtensions).
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

// serveExtensions adds the extensions' handlers to the outermost server,
// the one whose filters every request passes.
func serveExtensions(exts []Extension, s *genericapiserver.GenericAPIServer) {
	for _, ext := range exts {
		s.Handler.NonGoRestfulMux.HandlePrefix(ext.Prefix, ext.Handler)
	}
}
