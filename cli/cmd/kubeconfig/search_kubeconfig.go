package kubeconfig

import (
	"fmt"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/flotilla/internal/search"
)

// SearchContext is the context of the kubeconfig --search writes.
const SearchContext = "search"

func (o *proxyKubeconfigOptions) runSearch() error {
	raw, err := o.ClientConfig().RawConfig()
	if err != nil {
		return fmt.Errorf("cannot load the hub's kubeconfig from %s: %w", o.KubeconfigSource(), err)
	}
	out, err := searchKubeconfig(raw, o.Context, o.clusters)
	if err != nil {
		return err
	}
	return o.write(out, fmt.Sprintf("context %s, the hub's search index; e.g. kubectl --kubeconfig %s get pods -A -l app=web", SearchContext, o.outputFile))
}

// searchKubeconfig builds, from the hub kubeconfig raw and its context
// contextName, a kubeconfig whose one context reaches the hub's search
// index in the Kubernetes API's shape with the hub context's credentials,
// pinned to clusters when some are named.
func searchKubeconfig(raw clientcmdapi.Config, contextName string, clusters []string) (*clientcmdapi.Config, error) {
	hub, out, userName, err := hubCredentials(raw, contextName)
	if err != nil {
		return nil, err
	}
	c := hub.DeepCopy()
	c.Server = strings.TrimSuffix(hub.Server, "/") + strings.TrimSuffix(search.ResourcesPrefix, "/")
	if len(clusters) > 0 {
		c.Server += "/clusters/" + strings.Join(clusters, ",")
	}
	c.LocationOfOrigin = ""
	out.Clusters[SearchContext] = c
	out.Contexts[SearchContext] = &clientcmdapi.Context{Cluster: SearchContext, AuthInfo: userName}
	out.CurrentContext = SearchContext
	return out, nil
}
