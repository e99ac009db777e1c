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
// with bursts of burst. They resolve kinds through mapper, or through a
// discovery-backed RESTMapper of their own when mapper is nil.
func New(base *rest.Config, qps float32, burst int, mapper meta.RESTMapper) (*Clients, error) {
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
	if mapper == nil {
		mapper, err = NewMapper(cfg, httpClient)
		if err != nil {
			return nil, err
		}
	}
	c.Mapper = mapper
	return c, nil
}

// NewMapper returns a RESTMapper of the managed cluster that resolves kinds
// by discovery, and discovers again on a miss, so that a kind whose CRD
// arrives later becomes usable. httpClient may be nil.
func NewMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, err
		}
	}
	return apiutil.NewDynamicRESTMapper(cfg, httpClient)
}
