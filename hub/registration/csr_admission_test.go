package registration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/identity"
)

func TestCheckOwnSubjectOfAddOns(t *testing.T) {
	req := func(cn string, orgs ...string) []byte {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	}
	const kube, custom = "kubernetes.io/kube-apiserver-client", "example.com/signer"
	own := []string{"c1"}
	for _, tc := range []struct {
		name    string
		signer  string
		request []byte
		ok      bool
	}{
		{"its own agent", kube, req(identity.AgentUser("c1", "a1"), identity.AgentGroups("c1")...), true},
		{"its own add-on's agent", kube, req(addon.AgentUser("c1", "hello", "hello-agent"), addon.AgentGroups("c1", "hello")...), true},
		{"another cluster's add-on", kube, req(addon.AgentUser("c2", "hello", "hello-agent"), addon.AgentGroups("c2", "hello")...), false},
		{"its add-on with another cluster's group", kube, req(addon.AgentUser("c1", "hello", "hello-agent"), addon.ClusterAddOnGroup("c2", "hello")), false},
		{"its add-on with another add-on's group", kube, req(addon.AgentUser("c1", "hello", "hello-agent"), addon.ClusterAddOnGroup("c1", "other")), false},
		{"its add-on with system:masters", kube, req(addon.AgentUser("c1", "hello", "hello-agent"), "system:masters"), false},
		{"its add-on with the cluster's group", kube, req(addon.AgentUser("c1", "hello", "hello-agent"), identity.ClusterGroup("c1")), false},
		{"any user for the hub's signer", kube, req("someone"), false},
		{"any user for a custom signer", custom, req("someone", "team"), true},
		{"another cluster's add-on for a custom signer", custom, req("someone", addon.ClusterAddOnGroup("c2", "hello")), false},
		{"another cluster's agent for a custom signer", custom, req(identity.AgentUser("c2", "a1")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkOwnSubject(tc.request, tc.signer, own); (err == nil) != tc.ok {
				t.Fatalf("checkOwnSubject = %v, want ok=%t", err, tc.ok)
			}
		})
	}
}
