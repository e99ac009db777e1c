package tunnel

import (
	"net/http"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		path               string
		cluster, sub, rest string
		ok                 bool
	}{
		{path: "/apis/proxy.flotilla.io/v1/clusters/c1/proxy/api/v1/pods", cluster: "c1", sub: "proxy", rest: "/api/v1/pods", ok: true},
		{path: "/apis/proxy.flotilla.io/v1/clusters/c1/proxy", cluster: "c1", sub: "proxy", rest: "/", ok: true},
		{path: "/apis/proxy.flotilla.io/v1/clusters/c1/tunnel", cluster: "c1", sub: "tunnel", rest: "/", ok: true},
		{path: "/apis/proxy.flotilla.io/v1/clusters/c1", ok: false},
		{path: "/apis/proxy.flotilla.io/v1/clusters/", ok: false},
		{path: "/api/v1/pods", ok: false},
	} {
		c, s, r, ok := ParsePath(tc.path)
		if ok != tc.ok || c != tc.cluster || s != tc.sub || (ok && r != tc.rest) {
			t.Errorf("ParsePath(%q) = %q %q %q %v, want %q %q %q %v", tc.path, c, s, r, ok, tc.cluster, tc.sub, tc.rest, tc.ok)
		}
	}
}

func TestStripIdentity(t *testing.T) {
	h := http.Header{}
	for _, k := range []string{"Authorization", "Impersonate-User", "Impersonate-Group", "Impersonate-Extra-Scopes", "X-Flotilla-User", "X-Flotilla-Tunnel-Token", "Accept"} {
		h.Set(k, "v")
	}
	StripIdentity(h)
	if len(h) != 1 || h.Get("Accept") != "v" {
		t.Errorf("left %v, want only Accept", h)
	}
}
