package identity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"strings"
	"testing"
)

func TestParseAgentUser(t *testing.T) {
	cases := []struct {
		user           string
		cluster, agent string
		ok             bool
	}{
		{"system:open-cluster-management:c1:a1", "c1", "a1", true},
		{"system:open-cluster-management:c1", "", "", false},
		{"system:open-cluster-management:c1:a1:x", "", "", false},
		{"system:open-cluster-management::a1", "", "", false},
		{"system:bootstrap:abcdef", "", "", false},
	}
	for _, tc := range cases {
		c, a, ok := ParseAgentUser(tc.user)
		if c != tc.cluster || a != tc.agent || ok != tc.ok {
			t.Errorf("ParseAgentUser(%q) = %q, %q, %t; want %q, %q, %t", tc.user, c, a, ok, tc.cluster, tc.agent, tc.ok)
		}
	}
}

func TestCheckAgentSubject(t *testing.T) {
	cases := []struct {
		name    string
		req     x509.CertificateRequest
		wantErr string
	}{
		{"the contract's subject", x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser("c1", "a1"), Organization: AgentGroups("c1")}}, ""},
		{"groups in another order", x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser("c1", "a1"), Organization: []string{ManagedClustersGroup, ClusterGroup("c1")}}}, ""},
		{"another cluster's agent", x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser("c2", "a1"), Organization: AgentGroups("c1")}}, "does not name cluster c1"},
		{"another cluster's group", x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser("c1", "a1"), Organization: AgentGroups("c2")}}, "not exactly"},
		{"an extra group", x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser("c1", "a1"), Organization: append(AgentGroups("c1"), "system:masters")}}, "not exactly"},
		{"a missing group", x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser("c1", "a1"), Organization: []string{ClusterGroup("c1")}}}, "not exactly"},
		{"an IP SAN", x509.CertificateRequest{Subject: pkix.Name{CommonName: AgentUser("c1", "a1"), Organization: AgentGroups("c1")}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}, "subject alternative names"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseCertificateRequest(sign(t, &tc.req))
			if err != nil {
				t.Fatal(err)
			}
			agent, err := CheckAgentSubject(req, "c1")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr == "" && agent != "a1":
				t.Fatalf("agent %q, want a1", agent)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseCertificateRequestRejectsGarbage(t *testing.T) {
	if _, err := ParseCertificateRequest([]byte("not pem")); err == nil {
		t.Fatal("garbage parsed")
	}
}

func sign(t *testing.T, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
