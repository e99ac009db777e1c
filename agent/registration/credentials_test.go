package registration

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/flotilla/internal/identity"
)

func testCredentials(t *testing.T, notAfter time.Time) *Credentials {
	t.Helper()
	keyPEM, _, err := newCSR("edge-1", "a1", 0)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := signedCert(t, keyPEM, identity.AgentUser("edge-1", "a1"), notAfter.Add(-time.Hour), notAfter)
	hub := &clientcmdapi.Cluster{Server: "https://hub:6443", CertificateAuthorityData: []byte("hub CA")}
	c, err := newCredentials("edge-1", "a1", hub, keyPEM, certPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCredentialsSurviveTheSecret(t *testing.T) {
	g := NewWithT(t)
	c := testCredentials(t, time.Now().Add(time.Hour))
	kc, err := c.kubeconfig()
	g.Expect(err).NotTo(HaveOccurred())
	data := map[string][]byte{KeyFile: c.KeyPEM, CertFile: c.CertPEM, KubeconfigFile: kc, ClusterNameFile: []byte("edge-1"), AgentNameFile: []byte("a1")}

	st := parseSecret(data)
	g.Expect(st.invalid).NotTo(HaveOccurred())
	g.Expect(st.clusterName).To(Equal("edge-1"))
	g.Expect(st.agentID).To(Equal("a1"))
	g.Expect(st.creds.Hub.Server).To(Equal("https://hub:6443"))
	g.Expect(st.creds.Hub.CertificateAuthorityData).To(Equal([]byte("hub CA")))
	g.Expect(st.creds.Cert.Equal(c.Cert)).To(BeTrue())

	why := "the kubeconfig names the key and certificate beside it, so that the mounted secret is a kubeconfig"
	parsed, err := clientcmd.Load(kc)
	g.Expect(err).NotTo(HaveOccurred(), why)
	user := parsed.AuthInfos[parsed.Contexts[parsed.CurrentContext].AuthInfo]
	g.Expect(user.ClientCertificate).To(Equal(CertFile), why)
	g.Expect(user.ClientKey).To(Equal(KeyFile), why)
}

func TestParseSecretOfAnAgentThatHasNotJoinedYet(t *testing.T) {
	g := NewWithT(t)
	st := parseSecret(map[string][]byte{ClusterNameFile: []byte("edge-1"), AgentNameFile: []byte("a1")})
	g.Expect(st.creds).To(BeNil())
	g.Expect(st.invalid).NotTo(HaveOccurred())
	g.Expect(st.agentID).To(Equal("a1"))
}

func TestParseSecretWithAForeignCertificate(t *testing.T) {
	g := NewWithT(t)
	c := testCredentials(t, time.Now().Add(time.Hour))
	kc, _ := c.kubeconfig()
	st := parseSecret(map[string][]byte{KeyFile: c.KeyPEM, CertFile: c.CertPEM, KubeconfigFile: kc, ClusterNameFile: []byte("edge-2"), AgentNameFile: []byte("a1")})
	g.Expect(st.creds).To(BeNil())
	g.Expect(st.invalid).To(MatchError(ContainSubstring("system:open-cluster-management:edge-2:a1")))
}

func TestCredentialsUsable(t *testing.T) {
	now := time.Now()
	c := testCredentials(t, now.Add(time.Hour))
	same := c.Hub.DeepCopy()
	movedHub := &clientcmdapi.Cluster{Server: "https://new-hub:6443", CertificateAuthorityData: []byte("hub CA")}
	newCA := &clientcmdapi.Cluster{Server: "https://hub:6443", CertificateAuthorityData: []byte("rotated CA")}
	for _, tc := range []struct {
		name      string
		at        time.Time
		cluster   string
		agent     string
		bootstrap *clientcmdapi.Cluster
		wantErr   string
	}{
		{name: "valid, same hub", at: now, cluster: "edge-1", agent: "a1", bootstrap: same},
		{name: "valid, no bootstrap kubeconfig to compare with", at: now, cluster: "edge-1", agent: "a1"},
		{name: "expired", at: now.Add(time.Hour), cluster: "edge-1", agent: "a1", wantErr: "expired"},
		{name: "another cluster name", at: now, cluster: "edge-2", agent: "a1", wantErr: `cluster "edge-1"`},
		{name: "another agent", at: now, cluster: "edge-1", agent: "a2", wantErr: `agent "a1"`},
		{name: "the bootstrap kubeconfig names another hub", at: now, cluster: "edge-1", agent: "a1", bootstrap: movedHub, wantErr: "now names hub https://new-hub:6443"},
		{name: "the hub CA changed", at: now, cluster: "edge-1", agent: "a1", bootstrap: newCA, wantErr: "another hub CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := c.usable(tc.at, tc.cluster, tc.agent, tc.bootstrap)
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
			}
		})
	}
}
