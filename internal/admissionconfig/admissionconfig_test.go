package admissionconfig

import (
	"testing"

	"k8s.io/utils/ptr"
)

func TestClientConfig(t *testing.T) {
	byURL := ClientConfig("https://127.0.0.1:9443/", "", "/validate", []byte("ca"))
	if byURL.URL == nil || *byURL.URL != "https://127.0.0.1:9443/validate" || byURL.Service != nil || string(byURL.CABundle) != "ca" {
		t.Errorf("by URL: got %+v", byURL)
	}
	bySvc := ClientConfig("https://127.0.0.1:9443", "flotilla/flotilla-hub-webhook", "/validate", []byte("ca"))
	if bySvc.URL != nil || bySvc.Service == nil || bySvc.Service.Namespace != "flotilla" || bySvc.Service.Name != "flotilla-hub-webhook" ||
		!ptr.Equal(bySvc.Service.Path, ptr.To("/validate")) || !ptr.Equal(bySvc.Service.Port, ptr.To[int32](443)) {
		t.Errorf("by Service: got %+v", bySvc)
	}
}
