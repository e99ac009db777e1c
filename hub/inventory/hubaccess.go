package inventory

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// newClusterInfoCache returns a cache that holds ConfigMap
// kube-public/cluster-info alone, added to mgr: the hub's address and CA
// as the hub publishes them (hub/bootstrap), which every profile's access
// provider repeats.
func newClusterInfoCache(mgr manager.Manager) (cache.Cache, error) {
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		HTTPClient: mgr.GetHTTPClient(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {
				Namespaces: map[string]cache.Config{metav1.NamespacePublic: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", bootstrapapi.ConfigMapClusterInfo),
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create the cache of cluster-info: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}

// readHubAccess reads the hub's address and CA from cluster-info; nil
// when it is not published (yet).
func readHubAccess(ctx context.Context, r client.Reader) (*HubAccess, error) {
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, client.ObjectKey{Namespace: metav1.NamespacePublic, Name: bootstrapapi.ConfigMapClusterInfo}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", metav1.NamespacePublic, bootstrapapi.ConfigMapClusterInfo, err)
	}
	return parseClusterInfo(cm)
}

// parseClusterInfo reads the first cluster of cluster-info's kubeconfig.
func parseClusterInfo(cm *corev1.ConfigMap) (*HubAccess, error) {
	data := cm.Data[bootstrapapi.KubeConfigKey]
	if data == "" {
		return nil, nil
	}
	kc, err := clientcmd.Load([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("%s/%s: the kubeconfig under %s: %w", cm.Namespace, cm.Name, bootstrapapi.KubeConfigKey, err)
	}
	for _, c := range kc.Clusters {
		if c.Server != "" {
			return &HubAccess{Server: c.Server, CAData: c.CertificateAuthorityData}, nil
		}
	}
	return nil, nil
}
