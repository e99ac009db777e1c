package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/cli"
	"github.com/flotilla-io/flotilla/hub"
)

// cliResult is what one run of the flotilla command did.
type cliResult struct {
	Code   int
	Stdout string
	Stderr string
}

// flotilla runs the flotilla command line in this process, as a user would
// type it, and returns its exit code and output.
func flotilla(ctx context.Context, args ...string) cliResult {
	var out, errOut bytes.Buffer
	code := cli.Run(ctx, cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	specLog.Printf("$ flotilla %s\n%s%s(exit %d)\n", strings.Join(args, " "), out.String(), errOut.String(), code)
	return cliResult{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// onHub runs a hub command with the hub's admin kubeconfig.
func onHub(ctx context.Context, args ...string) cliResult {
	return flotilla(ctx, append(args, "--kubeconfig", hubCP.AdminKubeconfig)...)
}

// joinToken is the JSON printed by init -o json and get token -o json.
type joinToken struct {
	HubToken     string `json:"hub-token"`
	HubAPIServer string `json:"hub-apiserver"`
}

// hubInit runs `flotilla init -o json` with extra args and returns the token.
func hubInit(ctx context.Context, args ...string) joinToken {
	GinkgoHelper()
	res := onHub(ctx, append([]string{"init", "-o", "json"}, args...)...)
	Expect(res.Code).To(Equal(0), res.Stderr)
	var t joinToken
	Expect(json.Unmarshal([]byte(res.Stdout), &t)).To(Succeed(), "init -o json printed %q", res.Stdout)
	return t
}

// bootstrapClients are clients of the hub with a join token's credentials only.
func bootstrapClients(token string) (kubernetes.Interface, client.Client) {
	GinkgoHelper()
	cfg := hubCP.ConfigFor(nil, nil, token)
	c, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return kubernetes.NewForConfigOrDie(cfg), c
}

// createCSR creates, with kube's credentials, a CSR labelled for cluster
// label whose subject names cluster subject, as an agent would.
func createCSR(ctx context.Context, kube kubernetes.Interface, label, subject string) string {
	GinkgoHelper()
	_, csrPEM := newCSR("system:open-cluster-management:"+subject+":agent1",
		[]string{"system:open-cluster-management:" + subject, "system:open-cluster-management:managed-clusters"})
	csr, err := kube.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: label + "-", Labels: map[string]string{clusterv1.ClusterNameLabel: label}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           csrPEM,
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
			ExpirationSeconds: ptr.To[int32](3600),
		},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return csr.Name
}

// newManagedCluster is a ManagedCluster as an agent creates it.
func newManagedCluster(name string) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://" + name + ":6443"}}},
	}
}

// createManagedCluster creates a ManagedCluster with c's credentials.
func createManagedCluster(ctx context.Context, c client.Client, name string) {
	GinkgoHelper()
	Expect(c.Create(ctx, newManagedCluster(name))).To(Succeed())
}

// csrApproved says whether the hub's CSR name carries the Approved condition.
func csrApproved(ctx context.Context, name string) bool {
	GinkgoHelper()
	csr, err := hubCP.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

// hubAcceptsClient reads spec.hubAcceptsClient of a ManagedCluster.
func hubAcceptsClient(ctx context.Context, name string) bool {
	GinkgoHelper()
	mc := &clusterv1.ManagedCluster{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Name: name}, mc)).To(Succeed())
	return mc.Spec.HubAcceptsClient
}
