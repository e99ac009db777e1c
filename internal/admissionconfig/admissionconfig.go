// Package admissionconfig builds what the hub's admission webhook
// configurations share: how the API server reaches the hub's webhook
// server, by URL (the embedded control plane) or through a Service (a hub
// run on an existing cluster, as the chart installs it).
package admissionconfig

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
)

// ClientConfig reaches path on the hub's webhook server at serverURL
// (https://host:port), or at Service namespace/name (port 443) when
// service is "namespace/name", trusted with caBundle.
func ClientConfig(serverURL, service, path string, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	if ns, name, ok := strings.Cut(service, "/"); ok {
		return admissionregistrationv1.WebhookClientConfig{
			Service:  &admissionregistrationv1.ServiceReference{Namespace: ns, Name: name, Path: ptr.To(path), Port: ptr.To[int32](443)},
			CABundle: caBundle,
		}
	}
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(strings.TrimSuffix(serverURL, "/") + path), CABundle: caBundle}
}
