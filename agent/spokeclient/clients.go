// Package spokeclient builds the untyped clients through which the agent's
// controllers reach the managed cluster: dynamic and metadata clients and a
// discovery-backed RESTMapper, sharing one rate-limited HTTP client.
package spokeclient

import (
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Clients reach the managed cluster.
type Clients struct {
	// Config is the rate-limited configuration every client here uses;
	// typed clients a controller adds should use it with HTTPClient.
	Config *rest.Config
	// HTTPClient is the connection pool the clients share.
	HTTPClient *http.Client
	// Dynamic reads and writes objects of any kind.
	Dynamic dynamic.Interface
	// Metadata watches objects' metadata only.
	Metadata metadata.Interface
	// Mapper resolves kinds by discovery, and discovers again on a miss,
	// so that a kind whose CRD arrives later becomes usable.
	Mapper meta.RESTMapper
}

// New builds the clients from base, limited to qps requests per second
// with bursts of burst.
func New(base *rest.Config, qps float32, burst int) (*Clients, error) {
	cfg := rest.CopyConfig(base)
	cfg.QPS, cfg.Burst = qps, burst
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	c := &Clients{Config: cfg, HTTPClient: httpClient}
	if c.Dynamic, err = dynamic.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	if c.Metadata, err = metadata.NewForConfigAndClient(cfg, httpClient); err != nil {
		return nil, err
	}
	if c.Mapper, err = apiutil.NewDynamicRESTMapper(cfg, httpClient); err != nil {
		return nil, err
	}
	return c, nil
}
