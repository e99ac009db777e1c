// Command coredns is stock CoreDNS v1.15 (github.com/coredns/coredns,
// unmodified) with only the plugins a cluster's DNS needs to answer
// cluster.local and clusterset.local: the kubernetes plugin (whose
// `multicluster` option reads ServiceImports and the EndpointSlices
// labelled multicluster.kubernetes.io/service-name), and bind, errors,
// log, health, ready, cache and forward around it.
//
// It is built from a Go module of its own (hack/coredns/go.mod), as
// CoreDNS v1.15 needs newer Kubernetes client modules than the ones
// Flotilla is built with: `make coredns` builds bin/coredns and bin/dnsq.
// The tests run it against a spoke's API server (test/framework/coredns.go);
// docs/services.md says how to turn the same option on in a cluster's own
// CoreDNS.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	// The plugins, each registering its directive.
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives are the plugins above in CoreDNS's own order (its
// plugin.cfg, core/dnsserver/zdirectives.go): a request passes through
// them in this order, whatever the order in the Corefile.
var directives = []string{
	"bind",
	"ready",
	"health",
	"errors",
	"log",
	"cache",
	"kubernetes",
	"forward",
}

func init() {
	dnsserver.Directives = directives
}

func main() {
	coremain.Run()
}
