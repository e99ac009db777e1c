package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// The consumer below is written against the SIG-Multicluster schema alone
// (unstructured objects, field names as the CRD spells them), as MultiKueue
// or an Argo CD syncer would read ClusterProfiles: it lists the profiles of
// its namespace, picks the access provider named "flotilla", and writes a
// kubeconfig whose user runs that provider's credential plugin with
// provideClusterInfo, which kubectl and client-go then run.

var clusterProfiles = schema.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Resource: "clusterprofiles"}

// consumerKubeconfigs reads the ClusterProfiles of ns with cfg and writes,
// into dir, one kubeconfig per profile with a flotilla access provider,
// whose user runs plugin with args. It returns the kubeconfigs by profile.
func consumerKubeconfigs(ctx context.Context, cfg *rest.Config, ns, dir, plugin string, args ...string) (map[string]string, error) {
	list, err := dynamic.NewForConfigOrDie(cfg).Resource(clusterProfiles).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range list.Items {
		providers, _, _ := unstructured.NestedSlice(p.Object, "status", "accessProviders")
		for _, raw := range providers {
			provider, _ := raw.(map[string]any)
			if provider["name"] != "flotilla" {
				continue
			}
			cluster, _ := provider["cluster"].(map[string]any)
			// The provider's cluster is a kubeconfig cluster entry as it
			// is: extensions and all.
			kubeconfig := map[string]any{
				"apiVersion":      "v1",
				"kind":            "Config",
				"clusters":        []any{map[string]any{"name": p.GetName(), "cluster": cluster}},
				"users":           []any{map[string]any{"name": "flotilla", "user": map[string]any{"exec": map[string]any{"apiVersion": "client.authentication.k8s.io/v1", "command": plugin, "args": args, "provideClusterInfo": true, "interactiveMode": "Never"}}}},
				"contexts":        []any{map[string]any{"name": p.GetName(), "context": map[string]any{"cluster": p.GetName(), "user": "flotilla"}}},
				"current-context": p.GetName(),
			}
			data, err := yaml.Marshal(kubeconfig)
			if err != nil {
				return nil, err
			}
			path := filepath.Join(dir, p.GetName()+".kubeconfig")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				return nil, err
			}
			out[p.GetName()] = path
		}
	}
	return out, nil
}

// writeKubeconfig writes a hub kubeconfig with cfg's credentials to path.
func writeKubeconfig(cfg *rest.Config, path string) {
	GinkgoHelper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["me"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "me"}
	kc.CurrentContext = "hub"
	Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())
}

// execCredential runs plugin as kubectl runs an exec plugin for the
// cluster of kubeconfig (KUBERNETES_EXEC_INFO with the cluster), and
// returns its ExecCredential's status.
func execCredential(ctx context.Context, kubeconfig, plugin string, args ...string) (map[string]any, string, error) {
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, "", err
	}
	cluster := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	var config json.RawMessage
	if ext, ok := cluster.Extensions["client.authentication.k8s.io/exec"]; ok {
		if config, err = json.Marshal(ext); err != nil {
			return nil, "", err
		}
	}
	info, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"spec": map[string]any{"interactive": false, "cluster": map[string]any{
			"server": cluster.Server, "certificate-authority-data": base64.StdEncoding.EncodeToString(cluster.CertificateAuthorityData), "config": config,
		}},
	})
	if err != nil {
		return nil, "", err
	}
	cmd := exec.CommandContext(ctx, plugin, args...)
	cmd.Env = append(os.Environ(), "KUBERNETES_EXEC_INFO="+string(info))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, stderr.String(), err
	}
	var cred map[string]any
	if err := json.Unmarshal(stdout, &cred); err != nil {
		return nil, stderr.String(), err
	}
	status, _ := cred["status"].(map[string]any)
	return status, stderr.String(), nil
}

var _ = Describe("ClusterProfile access through the hub", Ordered, func() {
	var (
		plugin, dir, ns, c1, c2 string
		saKubeconfig            string
		profiles                map[string]string
	)

	BeforeAll(func(ctx SpecContext) {
		By("building the flotilla command")
		var err error
		plugin, err = gexec.Build("github.com/flotilla-io/flotilla/cmd/flotilla")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(gexec.CleanupBuildArtifacts)
		dir = GinkgoT().TempDir()

		var set string
		set, ns = newSetWithNamespace(ctx, "consumer")
		c1, c2 = newClusterName("reach-a"), newClusterName("reach-b")
		createMember(ctx, c1, set, member{})
		createMember(ctx, c2, set, member{})

		By("a ServiceAccount consumer in the inventory namespace, with a kubeconfig of the hub holding its token")
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "multikueue"}}
		Expect(hubCP.Client.Create(ctx, sa)).To(Succeed())
		tr, err := hubCP.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		saKubeconfig = filepath.Join(dir, "consumer-hub.kubeconfig")
		writeKubeconfig(&rest.Config{Host: hubCP.URL, TLSClientConfig: rest.TLSClientConfig{CAData: hubCP.CAData}, BearerToken: tr.Status.Token}, saKubeconfig)

		By("granting it: reading the profiles of its namespace, its own tokens, and the hub's proxy of the first cluster only")
		subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}
		grant(ctx, subject,
			rbacv1.PolicyRule{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclusters/proxy"}, ResourceNames: []string{c1}, Verbs: []string{"create"}})
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "inventory-consumer"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"multicluster.x-k8s.io"}, Resources: []string{"clusterprofiles"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{sa.Name}, Verbs: []string{"create"}},
		}}
		Expect(hubCP.Client.Create(ctx, role)).To(Succeed())
		Expect(hubCP.Client.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{subject},
		})).To(Succeed())

		By("the consumer reading its namespace's profiles, with its own token, into kubeconfigs")
		consumer, err := clientcmd.BuildConfigFromFlags("", saKubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			profiles, err = consumerKubeconfigs(ctx, consumer, ns, dir, plugin, "credential-plugin", "--kubeconfig", saKubeconfig)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(profiles).To(HaveKey(c1))
			g.Expect(profiles).To(HaveKey(c2))
		}).Should(Succeed())
		_, err = dynamic.NewForConfigOrDie(consumer).Resource(clusterProfiles).Namespace("default").List(ctx, metav1.ListOptions{})
		Expect(err).To(beForbidden(), "profiles outside the consumer's namespace")
	})

	It("gives a ServiceAccount a new short-lived token of its own from the hub", func(ctx SpecContext) {
		status, stderr, err := execCredential(ctx, profiles[c1], plugin, "credential-plugin", "--kubeconfig", saKubeconfig)
		Expect(err).NotTo(HaveOccurred(), stderr)
		token, _ := status["token"].(string)
		Expect(token).NotTo(BeEmpty())
		own, err := clientcmd.BuildConfigFromFlags("", saKubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(token).NotTo(Equal(own.BearerToken), "the plugin handed on the kubeconfig's token instead of a new one")
		expires, err := time.Parse(time.RFC3339, status["expirationTimestamp"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(time.Until(expires)).To(And(BeNumerically(">", 8*time.Minute), BeNumerically("<=", 11*time.Minute)), "the default lifetime is 10m")

		By("the token being the ServiceAccount's")
		review, err := kubernetes.NewForConfigOrDie(&rest.Config{Host: hubCP.URL, TLSClientConfig: rest.TLSClientConfig{CAData: hubCP.CAData}, BearerToken: token}).
			AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(review.Status.UserInfo.Username).To(Equal("system:serviceaccount:" + ns + ":multikueue"))
	})

	It("lets the hub's RBAC decide: through the door of the granted cluster, 403 from the hub for the other", func(ctx SpecContext) {
		through := func(c string) (*corev1.PodList, error) {
			cfg, err := clientcmd.BuildConfigFromFlags("", profiles[c])
			Expect(err).NotTo(HaveOccurred())
			return kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		}
		By("the granted cluster: past the hub's authorization, at the cluster's door")
		_, err := through(c1)
		// These clusters have no agent, so no tunnel: the door answers
		// 503 for it. Neither 401 (the plugin's credential is good) nor
		// 403 (the hub's RBAC grants c1).
		Expect(err).To(HaveOccurred())
		Expect(apierrors.IsServiceUnavailable(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("has no tunnel to the hub"))

		By("the other cluster: refused by the hub")
		_, err = through(c2)
		Expect(err).To(beForbidden())
		Expect(err.Error()).To(ContainSubstring("system:serviceaccount:" + ns + ":multikueue"))
		Expect(err.Error()).To(ContainSubstring("managedclusters/proxy"))

	})

	It("hands on a user's client certificate, whose hub RBAC then decides", func(ctx SpecContext) {
		carol := filepath.Join(dir, "carol.kubeconfig")
		writeKubeconfig(userConfig("carol", "team-c"), carol)
		kc, err := clientcmd.LoadFromFile(profiles[c1])
		Expect(err).NotTo(HaveOccurred())
		kc.AuthInfos["flotilla"].Exec.Args = []string{"credential-plugin", "--kubeconfig", carol}
		carolProfile := filepath.Join(dir, "carol-"+c1+".kubeconfig")
		Expect(clientcmd.WriteToFile(*kc, carolProfile)).To(Succeed())

		status, stderr, err := execCredential(ctx, carolProfile, plugin, kc.AuthInfos["flotilla"].Exec.Args...)
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(status["clientCertificateData"]).To(ContainSubstring("BEGIN CERTIFICATE"))
		Expect(status["clientKeyData"]).To(ContainSubstring("PRIVATE KEY"))

		cfg, err := clientcmd.BuildConfigFromFlags("", carolProfile)
		Expect(err).NotTo(HaveOccurred())
		_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		Expect(err).To(beForbidden())
		Expect(err.Error()).To(ContainSubstring(`"carol"`))
	})

	It("tells a ServiceAccount without the grant for its own tokens what it lacks", func(ctx SpecContext) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ungranted"}}
		Expect(hubCP.Client.Create(ctx, sa)).To(Succeed())
		tr, err := hubCP.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		path := filepath.Join(dir, "ungranted.kubeconfig")
		writeKubeconfig(&rest.Config{Host: hubCP.URL, TLSClientConfig: rest.TLSClientConfig{CAData: hubCP.CAData}, BearerToken: tr.Status.Token}, path)
		_, stderr, err := execCredential(ctx, profiles[c1], plugin, "credential-plugin", "--kubeconfig", path)
		Expect(err).To(HaveOccurred())
		Expect(stderr).To(ContainSubstring("grant it create on serviceaccounts/token named ungranted"))
	})

	It("lists pods on the granted cluster through the hub, as a cluster-inventory-api consumer does with the provider file and the cluster RBAC of docs/inventory.md", func(ctx SpecContext) {
		env := newAgentEnv(ctx)
		c := newClusterName("reach-tunnel")
		opts := env.options(c)
		opts.Proxy = true
		env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
		startAgent(opts)
		acceptAgent(ctx, c)
		deleteClusterAfterSpec(c)
		set := newClusterName("reach-tunnel")
		createSet(ctx, set, nil)
		bindSet(ctx, ns, set)
		Eventually(func() error {
			mc := getCluster(ctx, c)
			mc.Labels = map[string]string{"cluster.open-cluster-management.io/clusterset": set}
			return hubCP.Client.Update(ctx, mc)
		}).Should(Succeed())
		subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "multikueue"}
		grant(ctx, subject, rbacv1.PolicyRule{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclusters/proxy"}, ResourceNames: []string{c}, Verbs: []string{"create"}})

		By("the cluster's RBAC for the prefixed identity, as docs/inventory.md grants it to ServiceAccount multikueue of kueue-system")
		rbac := strings.ReplaceAll(docBlock("cluster-rbac"), "kueue-system", ns)
		for _, obj := range decodeYAMLObjects(rbac) {
			Expect(env.spoke.Client.Create(ctx, obj)).To(Succeed())
		}

		By("the provider file of docs/inventory.md, with --kubeconfig added as it says outside a pod")
		providers := providerFile(docBlock("provider-file"), plugin, "--kubeconfig", saKubeconfig)
		consumer, err := clientcmd.BuildConfigFromFlags("", saKubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			p, err := dynamic.NewForConfigOrDie(consumer).Resource(clusterProfiles).Namespace(ns).Get(ctx, c, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			cfg, err := providers.restConfig(p)
			g.Expect(err).NotTo(HaveOccurred())
			_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}, "60s").Should(Succeed())
	})
})
