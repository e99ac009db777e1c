package integration

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	hubsearch "github.com/flotilla-io/flotilla/hub/search"
	"github.com/flotilla-io/flotilla/hub/search/query"
	"github.com/flotilla-io/flotilla/hub/search/store/sqlite"
	"github.com/flotilla-io/flotilla/internal/search"
	"github.com/flotilla-io/flotilla/test/framework"
)

// The query paths of a hub that serves search over a real SQLite index:
// the hub API server's own authentication, its authorizer and RBAC in
// front; users with grants on some clusters; kubectl and the CLI.
var _ = Describe("Search query", Ordered, func() {
	const ns = "search-query"
	clusters := []string{"sq-c1", "sq-c2", "sq-c3"}
	var (
		hub    *framework.ControlPlane
		caFile string
		tokens = map[string]string{}
	)

	BeforeAll(func(ctx SpecContext) {
		st, err := sqlite.Open(ctx, filepath.Join(GinkgoT().TempDir(), "index.db"))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		hub, err = framework.StartHub(ctx, withSearch(hubsearch.New(st, hubsearch.Options{}), &ingestLog{}))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop() })
		caFile = filepath.Join(GinkgoT().TempDir(), "ca.crt")
		Expect(os.WriteFile(caFile, hub.CAData, 0o600)).To(Succeed())

		By("indexing objects of three clusters the hub has")
		created := metav1.NewTime(time.Now().Add(-time.Hour))
		for _, c := range clusters {
			createManagedCluster(ctx, hub.Client, c)
			Expect(st.Apply(ctx, c, []searchv1alpha1.Object{
				{Version: "v1", Resource: "pods", Kind: "Pod", Namespace: "shop", Name: "web-" + c, UID: k8stypes.UID("web-" + c), ResourceVersion: "1",
					CreationTimestamp: created, Labels: map[string]string{"app": "web"}, Images: []string{"nginx:1.27"}, Status: "Running",
					Owner: &searchv1alpha1.Owner{Kind: "ReplicaSet", Name: "web-5d4f"}},
				{Version: "v1", Resource: "pods", Kind: "Pod", Namespace: "shop", Name: "db-" + c, UID: k8stypes.UID("db-" + c), ResourceVersion: "1",
					CreationTimestamp: created, Labels: map[string]string{"app": "db"}, Images: []string{"postgres:16"}, Status: "CrashLoopBackOff"},
				{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespace: "shop", Name: "web", UID: k8stypes.UID("deploy-" + c),
					ResourceVersion: "1", CreationTimestamp: created, Labels: map[string]string{"app": "web"}, Images: []string{"nginx:1.27"}, Status: "Available"},
			}, nil)).To(Succeed())
		}

		By("making users alice (proxy to sq-c1, search on sq-c2), carol (proxy to every cluster) and bob (nothing)")
		kube := hub.Kube
		Expect(createErr(kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))).To(Succeed())
		grant := func(name, user, verb, sub string, names ...string) {
			role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{query.ClusterGroup}, Resources: []string{query.ClusterResource + "/" + sub}, Verbs: []string{verb}, ResourceNames: names,
			}}}
			Expect(createErr(kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}))).To(Succeed())
			binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: user}}}
			Expect(createErr(kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}))).To(Succeed())
		}
		for _, u := range []string{"alice", "bob", "carol"} {
			Expect(createErr(kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: u}}, metav1.CreateOptions{}))).To(Succeed())
			tr, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, u, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			tokens[u] = tr.Status.Token
		}
		grant("search-query-alice-proxy", "alice", "create", query.ProxySubresource, "sq-c1")
		grant("search-query-alice-search", "alice", "get", query.SearchSubresource, "sq-c2")
		grant("search-query-carol", "carol", "create", query.ProxySubresource)
	})

	get := func(user, path string) (int, []byte) {
		req, err := http.NewRequest(http.MethodGet, hub.URL+path, nil)
		Expect(err).NotTo(HaveOccurred())
		if tokens[user] != "" {
			req.Header.Set("Authorization", "Bearer "+tokens[user])
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(hub.CAData)
		resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}).Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		return resp.StatusCode, body
	}
	searchAs := func(user, q string) []string {
		code, body := get(user, search.SearchPath+"?q="+url.QueryEscape(q))
		Expect(code).To(Equal(http.StatusOK), string(body))
		var res searchv1alpha1.SearchResult
		Expect(json.Unmarshal(body, &res)).To(Succeed())
		found := []string{}
		for _, it := range res.Items {
			found = append(found, it.Cluster+"/"+it.Name)
		}
		return found
	}

	It("shows each user only the clusters its grants name, and a user with none an empty result", func() {
		Expect(searchAs("alice", "kind=Pod status=CrashLoopBackOff")).To(Equal([]string{"sq-c1/db-sq-c1", "sq-c2/db-sq-c2"}))
		Expect(searchAs("carol", "kind=Pod status=CrashLoopBackOff")).To(Equal([]string{"sq-c1/db-sq-c1", "sq-c2/db-sq-c2", "sq-c3/db-sq-c3"}))
		Expect(searchAs("carol", "image=nginx app=web cluster!=sq-c1")).To(Equal([]string{"sq-c2/web", "sq-c2/web-sq-c2", "sq-c3/web", "sq-c3/web-sq-c3"}))
		By("naming a cluster alice may not see: nothing from it")
		Expect(searchAs("alice", "kind=Deployment cluster=sq-c3,sq-c2")).To(Equal([]string{"sq-c2/web"}))
		Expect(searchAs("bob", "kind=Pod")).To(BeEmpty())
		By("an anonymous request: refused")
		code, body := get("nobody", search.SearchPath)
		Expect(code).To(Or(Equal(http.StatusUnauthorized), Equal(http.StatusForbidden)), string(body))
	})

	It("says what is wrong with a malformed query and with a kind that is not indexed", func() {
		code, body := get("alice", search.SearchPath+"?q="+url.QueryEscape("kind=Pod status!=Running"))
		Expect(code).To(Equal(http.StatusBadRequest))
		Expect(string(body)).To(ContainSubstring(`query term \"status!=Running\": status does not take != (only kind, group, cluster do): name the values you want, status=a,b`))
		code, body = get("alice", search.SearchPath+"?q=kind=Widget")
		Expect(code).To(Equal(http.StatusBadRequest))
		Expect(string(body)).To(ContainSubstring(`kind Widget is not indexed by search`))
	})

	It("answers kubectl get across clusters, with a CLUSTER column, and pinned to a cluster by the server URL", func() {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			Fail("kubectl is not installed: the spec runs the real one")
		}
		dir := GinkgoT().TempDir()
		run := func(user, server string, args ...string) string {
			args = append([]string{"--server", server, "--certificate-authority", caFile, "--token", tokens[user], "--cache-dir", dir}, args...)
			out, err := exec.Command(kubectl, args...).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
			return string(out)
		}
		resources := hub.URL + strings.TrimSuffix(search.ResourcesPrefix, "/")
		Expect(run("alice", resources, "get", "pods", "-A", "-l", "app=web")).To(Equal(
			"NAMESPACE   CLUSTER   NAME        STATUS    AGE\n" +
				"shop        sq-c1     web-sq-c1   Running   60m\n" +
				"shop        sq-c2     web-sq-c2   Running   60m\n"))
		Expect(run("carol", resources, "get", "deployments.apps", "-n", "shop", "-o", "wide")).To(Equal(
			"CLUSTER   NAME   STATUS      AGE   IMAGES       OWNER\n" +
				"sq-c1     web    Available   60m   nginx:1.27   <none>\n" +
				"sq-c2     web    Available   60m   nginx:1.27   <none>\n" +
				"sq-c3     web    Available   60m   nginx:1.27   <none>\n"))
		Expect(run("carol", resources+"/clusters/sq-c3", "get", "po", "-n", "shop", "--show-labels")).To(Equal(
			"CLUSTER   NAME        STATUS             AGE   LABELS\n" +
				"sq-c3     db-sq-c3    CrashLoopBackOff   60m   app=db\n" +
				"sq-c3     web-sq-c3   Running            60m   app=web\n"))
		By("pinning a cluster alice may not see: no resources, not an error")
		Expect(run("alice", resources+"/clusters/sq-c3", "get", "pods", "-A")).To(Equal("No resources found\n"))
		Expect(run("bob", resources, "get", "pods", "-A")).To(Equal("No resources found\n"))
	})

	It("answers flotilla search, and flotilla kubeconfig --search writes what kubectl reads", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		hubKubeconfig := filepath.Join(dir, "alice.kubeconfig")
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: hub.URL, CertificateAuthority: caFile}
		cfg.AuthInfos["alice"] = &clientcmdapi.AuthInfo{Token: tokens["alice"]}
		cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "alice"}
		cfg.CurrentContext = "hub"
		Expect(clientcmd.WriteToFile(*cfg, hubKubeconfig)).To(Succeed())

		res := flotilla(ctx, "search", "kind=Pod status=CrashLoopBackOff", "--kubeconfig", hubKubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		Expect(res.Stdout).To(Equal("" +
			"CLUSTER   NAMESPACE   NAME       KIND   STATUS             AGE\n" +
			"sq-c1     shop        db-sq-c1   Pod    CrashLoopBackOff   60m\n" +
			"sq-c2     shop        db-sq-c2   Pod    CrashLoopBackOff   60m\n"))
		res = flotilla(ctx, "search", "web", "app=web", "-o", "wide", "--kubeconfig", hubKubeconfig)
		Expect(res.Stdout).To(Equal("" +
			"CLUSTER   NAMESPACE   NAME        KIND         STATUS      AGE   IMAGES       OWNER                 LABELS\n" +
			"sq-c1     shop        web         Deployment   Available   60m   nginx:1.27   -                     app=web\n" +
			"sq-c1     shop        web-sq-c1   Pod          Running     60m   nginx:1.27   ReplicaSet/web-5d4f   app=web\n" +
			"sq-c2     shop        web         Deployment   Available   60m   nginx:1.27   -                     app=web\n" +
			"sq-c2     shop        web-sq-c2   Pod          Running     60m   nginx:1.27   ReplicaSet/web-5d4f   app=web\n"))

		By("paging: one page says more match, --all follows continue to the end")
		res = flotilla(ctx, "search", "kind=Pod", "--limit", "1", "--kubeconfig", hubKubeconfig)
		Expect(strings.Count(res.Stdout, "\n")).To(Equal(2))
		Expect(res.Stderr).To(ContainSubstring("More objects match: pass --all for every page, or narrow the query."))
		res = flotilla(ctx, "search", "kind=Pod", "--limit", "1", "--all", "-o", "json", "--kubeconfig", hubKubeconfig)
		var all searchv1alpha1.SearchResult
		Expect(json.Unmarshal([]byte(res.Stdout), &all)).To(Succeed(), res.Stdout)
		Expect(all.Items).To(HaveLen(4))
		Expect(all.Continue).To(BeEmpty())

		By("the server's message for a malformed query, as it is")
		res = flotilla(ctx, "search", "kind=", "--kubeconfig", hubKubeconfig)
		Expect(res.Code).To(Equal(1))
		Expect(res.Stderr).To(Equal("Error: query term \"kind=\": kind= has no value: write kind=<value>\n"))

		searchKubeconfig := filepath.Join(dir, "search.kubeconfig")
		res = flotilla(ctx, "kubeconfig", "--search", "--clusters", "sq-c2", "--output-file", searchKubeconfig, "--kubeconfig", hubKubeconfig)
		Expect(res.Code).To(Equal(0), res.Stderr)
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			Fail("kubectl is not installed: the spec runs the real one")
		}
		out, err := exec.Command(kubectl, "--kubeconfig", searchKubeconfig, "--cache-dir", dir, "get", "pods", "-A").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).To(Equal("" +
			"NAMESPACE   CLUSTER   NAME        STATUS             AGE\n" +
			"shop        sq-c2     db-sq-c2    CrashLoopBackOff   60m\n" +
			"shop        sq-c2     web-sq-c2   Running            60m\n"))
	})
})

// createErr is the error of a create, whose object the spec does not need.
func createErr(_ any, err error) error { return err }
