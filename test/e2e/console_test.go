package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/test/framework"
)

// artifactDir receives the console's screenshots (a CI artefact, not committed).
var artifactDir = func() string {
	if d := os.Getenv("FLOTILLA_ARTIFACTS"); d != "" {
		return filepath.Join(d, "console")
	}
	return filepath.Join("..", "..", "_artifacts", "console")
}()

var _ = Describe("flotilla console in headless Chromium", func() {
	It("lists the fleet, turns a broken policy's cell NonCompliant live, draws a rollout's timeline without overlaps, shows a stopped agent's cluster, accepts a pending cluster, denies one only once confirmed, and hides what RBAC hides", func(ctx SpecContext) {
		browser, hub, dir, onHub := consoleHub(ctx)
		admin := devClient(hub.Kubeconfig)

		By("joining three clusters and accepting two; cluster3 stays pending")
		join := joinInfo(onHub("init", "-o", "json"))
		spokes := map[string]*framework.ControlPlane{}
		agents := map[string]*joinedAgent{}
		for _, name := range []string{"cluster1", "cluster2", "cluster3"} {
			spoke, err := framework.Start(ctx, framework.Spoke)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(spoke.Stop)
			spokes[name] = spoke
			agents[name] = startJoin(ctx, spoke, join.Token, join.URL, name)
		}
		res := onHub("accept", "--clusters", "cluster1,cluster2", "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(0), res.stderr)
		Eventually(func() error { return admin.Get(ctx, client.ObjectKey{Name: "cluster3"}, &clusterv1.ManagedCluster{}) }).Should(Succeed())

		By("starting the console and opening its URL")
		url, console := startConsole(ctx, hub.Kubeconfig)
		consoleStarted := time.Now()
		Expect(chromedp.Do(browser, chromedp.Navigate(url))).To(Succeed())
		Eventually(func() string { return textOf(browser, `tr[data-cluster="cluster1"] .health`) }).Should(ContainSubstring("Available"))
		Eventually(func() string { return textOf(browser, `tr[data-cluster="cluster2"] .health`) }).Should(ContainSubstring("Available"))
		Eventually(func() string { return textOf(browser, `tr[data-cluster="cluster3"] .health`) }).Should(ContainSubstring("Pending"))
		Expect(textOf(browser, `h1`)).To(Equal("Fleet"))
		screenshot(browser, "fleet")

		By("a second browser page without the session is refused, and the spent secret opens nothing")
		Expect(statusOf(consoleBase(url) + "/fleet")).To(Equal(http.StatusForbidden))
		Expect(statusOf(url)).To(Equal(http.StatusForbidden))

		By("accepting cluster3 from the console: it joins and turns Available")
		click(browser, `tr[data-cluster="cluster3"] form[action="/actions/accept"] button`)
		Eventually(func() string { return textOf(browser, `#flash`) }).Should(ContainSubstring("Accepted cluster cluster3"))
		Eventually(func() string { return textOf(browser, `tr[data-cluster="cluster3"] .health`) }, 2*time.Minute).Should(ContainSubstring("Available"))

		By("binding a policy that wants namespace prod; cluster1 has it, so its cell is Compliant")
		Expect(spokes["cluster1"].Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}})).To(Succeed())
		Expect(onHub("clusterset", "bind", "global", "-n", "policies").code).To(Equal(0))
		res = onHub("create", "placement", "everywhere", "-n", "policies", "--clustersets", "global", "--wait")
		Expect(res.code).To(Equal(0), res.stderr)
		res = onHub("create", "policy", "-f", informPolicy(), "--placement", "everywhere")
		Expect(res.code).To(Equal(0), res.stderr)
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/governance"))).To(Succeed())
		cell := `td[data-cell="policies/policy-namespace/cluster1"]`
		Eventually(func() string { return textOf(browser, cell) }, 2*time.Minute).Should(HaveSuffix(" Compliant"))
		Eventually(func() string { return textOf(browser, `td[data-cell="policies/policy-namespace/cluster2"]`) }, 2*time.Minute).Should(ContainSubstring("NonCompliant"))

		By("deleting namespace prod on cluster1: its cell turns NonCompliant without a reload")
		Expect(chromedp.Run(browser, chromedp.Evaluate[bool](`window.notReloaded = true`))).Error().NotTo(HaveOccurred())
		Expect(spokes["cluster1"].Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}})).To(Succeed())
		Eventually(func() string { return textOf(browser, cell) }, 2*time.Minute).Should(ContainSubstring("NonCompliant"))
		same, err := chromedp.Run(browser, chromedp.Evaluate[bool](`window.notReloaded === true`))
		Expect(err).NotTo(HaveOccurred())
		Expect(same).To(BeTrue(), "the page was reloaded")
		screenshot(browser, "governance")
		click(browser, cell+" a")
		Eventually(func() string { return textOf(browser, `main`) }).Should(ContainSubstring("namespaces [prod] not found"))
		screenshot(browser, "governance-cell")

		By("a work on cluster1 and cluster2; the cluster view shows its manifests")
		example := filepath.Join("..", "..", "..", "shared", "examples", "manifestwork-hello.yaml")
		for _, c := range []string{"cluster1", "cluster2"} {
			res = onHub("create", "work", "hello", "-f", example, "--clusters", c)
			Expect(res.code).To(Equal(0), res.stderr)
		}
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/clusters/cluster1"))).To(Succeed())
		Eventually(func() string { return textOf(browser, `#work-hello`) }).Should(ContainSubstring("hello"))
		Eventually(func() string { return textOf(browser, `main`) }).Should(ContainSubstring("Deployment default/hello"))
		screenshot(browser, "cluster")

		By("a Service exported from cluster1: its cluster view shows the export Valid and the import of its set, cluster2's the import")
		Expect(spokes["cluster1"].Client.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})).To(Succeed())
		serviceExport := &unstructured.Unstructured{}
		serviceExport.SetGroupVersionKind(schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1beta1", Kind: "ServiceExport"})
		serviceExport.SetNamespace("default")
		serviceExport.SetName("web")
		// The agent installs the ServiceExport CRD when it starts.
		Eventually(func() error { return spokes["cluster1"].Client.Create(ctx, serviceExport.DeepCopy()) }).Should(Succeed())
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/clusters/cluster1"))).To(Succeed())
		Eventually(func() string { return textOf(browser, `tr[data-export="default/web"] .state`) }, time.Minute).Should(ContainSubstring("Valid"))
		Eventually(func() string { return textOf(browser, `tr[data-import="default/web"]`) }, time.Minute).Should(
			And(ContainSubstring("web.default.svc.clusterset.local"), ContainSubstring("cluster1 (this cluster too)")))
		screenshot(browser, "cluster-services")
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/clusters/cluster2"))).To(Succeed())
		Eventually(func() string { return textOf(browser, `tr[data-import="default/web"]`) }, time.Minute).Should(ContainSubstring("cluster1"))
		Expect(textOf(browser, `#exports + .scroll`)).To(ContainSubstring("No exported service"))
		for _, view := range []string{"rollouts", "placements", "placements/policies/everywhere"} {
			Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/"+view))).To(Succeed())
			Eventually(func() string { return textOf(browser, `h1`) }).ShouldNot(BeEmpty())
			screenshot(browser, regexp.MustCompile(`\W`).ReplaceAllString(view, "-"))
		}

		By("rolling a ConfigMap out with the placement, then a new version: its events share a second, and the timeline's markers do not overlap")
		settings := filepath.Join(GinkgoT().TempDir(), "settings.yaml")
		for _, v := range []string{"1", "2"} {
			Expect(os.WriteFile(settings, []byte(settingsConfigMap(v)), 0o600)).To(Succeed())
			res = onHub("create", "work", "settings", "-f", settings, "--placement", "policies/everywhere", "--overwrite", "--wait", "--timeout", "3m")
			Expect(res.code).To(Equal(0), res.stderr)
		}
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/rollouts/policies/settings"))).To(Succeed())
		var markers []timelineMarkers
		Eventually(func() []timelineMarkers { markers = timelineBoxes(browser); return markers }, time.Minute).Should(HaveLen(3))
		GinkgoWriter.Printf("timeline markers: %+v\ntimes:\n%s\n", markers, textOf(browser, `#timeline`))
		for _, m := range markers {
			Expect(m.overlap()).To(BeFalse(), "row %d: the applied circle %v and the available square %v overlap", m.Row, m.Applied, m.Available)
		}
		screenshot(browser, "rollout")

		By("stopping the agent of cluster2: the fleet shows it unreachable, live")
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/fleet"))).To(Succeed())
		Eventually(func() string { return textOf(browser, `tr[data-cluster="cluster2"] .health`) }).Should(ContainSubstring("Available"))
		agents["cluster2"].Kill()
		Eventually(func() string { return textOf(browser, `tr[data-cluster="cluster2"] .health`) }, time.Minute).Should(ContainSubstring("Unknown"))
		Expect(textOf(browser, `tr[data-cluster="cluster2"] .health`)).To(ContainSubstring("unreachable"))

		By("a user who may read the works of cluster1 only does not see those of cluster2")
		viewer := restrictedKubeconfig(ctx, hub.Kubeconfig, dir)
		viewerURL, _ := startConsole(ctx, viewer)
		other := startBrowser()
		Expect(chromedp.Do(other, chromedp.Navigate(viewerURL))).To(Succeed())
		Eventually(func() string { return textOf(other, `tr[data-cluster="cluster2"] th`) }).Should(Equal("cluster2"))
		Expect(chromedp.Do(other, chromedp.Navigate(consoleBase(viewerURL)+"/clusters/cluster1"))).To(Succeed())
		Eventually(func() string { return textOf(other, `#works ~ section`) }).Should(ContainSubstring("hello"))
		Expect(chromedp.Do(other, chromedp.Navigate(consoleBase(viewerURL)+"/clusters/cluster2"))).To(Succeed())
		Eventually(func() string { return textOf(other, `main`) }).Should(ContainSubstring("does not let you see the ManifestWorks in namespace cluster2"))
		Expect(textOf(other, `main`)).NotTo(ContainSubstring("Deployment default/hello"))
		screenshot(other, "cluster-restricted")

		By("and the hub refuses them an accept, which the console shows")
		Expect(chromedp.Do(other, chromedp.Navigate(consoleBase(viewerURL)+"/clusters/cluster1"))).To(Succeed())
		Eventually(func() string { return textOf(other, `form[action="/actions/deny"] button`) }).Should(Equal("Deny"))
		click(other, `form[action="/actions/deny"] button`)
		Eventually(func() bool { return dialogOpen(other) }).Should(BeTrue())
		click(other, `#confirm-yes`)
		Eventually(func() string { return textOf(other, `#flash`) }).Should(And(ContainSubstring("Refused"), ContainSubstring("forbidden")))
		mc := &clusterv1.ManagedCluster{}
		Expect(admin.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc)).To(Succeed())
		Expect(mc.Spec.HubAcceptsClient).To(BeTrue())
		Expect(meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)).To(BeTrue())

		By("the fleet offers no Deny on healthy cluster3's row, but on unreachable cluster2's")
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/fleet"))).To(Succeed())
		Eventually(func() string { return textOf(browser, `tr[data-cluster="cluster3"] .health`) }).Should(ContainSubstring("Available"))
		Expect(textOf(browser, `tr[data-cluster="cluster3"] form[action="/actions/deny"]`)).To(BeEmpty())
		Expect(textOf(browser, `tr[data-cluster="cluster2"] form[action="/actions/deny"] button`)).To(Equal("Deny"))

		By("Deny on cluster3's page asks first: nothing is denied until confirmed, Cancel keeps it, and confirming denies it")
		accepted := func() bool {
			mc := &clusterv1.ManagedCluster{}
			Expect(admin.Get(ctx, client.ObjectKey{Name: "cluster3"}, mc)).To(Succeed())
			return mc.Spec.HubAcceptsClient
		}
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(url)+"/clusters/cluster3"))).To(Succeed())
		click(browser, `form[action="/actions/deny"] button`)
		Eventually(func() bool { return dialogOpen(browser) }).Should(BeTrue())
		Expect(textOf(browser, `#confirm-question`)).To(HavePrefix("Deny cluster cluster3? The hub stops accepting it"))
		screenshot(browser, "deny-confirm")
		Consistently(accepted, 3*time.Second, 250*time.Millisecond).Should(BeTrue(), "denied before it was confirmed")
		click(browser, `#confirm-no`)
		Eventually(func() bool { return dialogOpen(browser) }).Should(BeFalse())
		Consistently(accepted, 2*time.Second, 250*time.Millisecond).Should(BeTrue(), "denied though cancelled")
		click(browser, `form[action="/actions/deny"] button`)
		Eventually(func() bool { return dialogOpen(browser) }).Should(BeTrue())
		click(browser, `#confirm-yes`)
		Eventually(func() string { return textOf(browser, `#flash`) }).Should(Equal("Denied cluster cluster3."))
		Expect(accepted()).To(BeFalse())

		By("the console prints no controller-runtime SetLogger warning, which controller-runtime prints 30 s after start when no logger was set")
		Consistently(console.Output).WithTimeout(max(time.Until(consoleStarted.Add(40*time.Second)), time.Second)).WithPolling(time.Second).
			ShouldNot(ContainSubstring("log.SetLogger(...) was never called"))
	})
})

// startBrowser starts headless Chromium for the spec. Under CI=true a
// missing chromium fails the spec; elsewhere it skips it.
// consoleHub starts a browser and a hub process for one console spec:
// the browser, the hub, the spec's temporary directory, and a way to run
// flotilla against the hub.
func consoleHub(ctx SpecContext) (context.Context, *framework.HubProcess, string, func(args ...string) cliRun) {
	GinkgoHelper()
	browser := startBrowser()
	klog.LogToStderr(false)
	klog.SetOutput(GinkgoWriter)
	dir := GinkgoT().TempDir()
	hub, err := framework.StartHubProcess(ctx, *binDir, dir, 2*time.Minute)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { hub.Stop(30 * time.Second) })
	onHub := func(args ...string) cliRun {
		GinkgoHelper()
		return runFlotilla(ctx, append(args, "--kubeconfig", hub.Kubeconfig)...)
	}
	return browser, hub, dir, onHub
}

func startBrowser() context.Context {
	GinkgoHelper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			Fail("chromium is not installed: apt-get install chromium (.ci/run does)")
		}
		Skip("chromium is not installed (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1440, 900),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(GinkgoT().TempDir()),
		// Chromium leaves its singleton socket's directory in $TMPDIR.
		chromedp.Env("TMPDIR="+GinkgoT().TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancel := chromedp.NewContext(alloc)
	DeferCleanup(func() { cancel(); cancelAlloc() })
	Expect(chromedp.Do(browser)).To(Succeed())
	return browser
}

// textOf is the text of the first element matching sel, "" when none
// does; it never waits, for Eventually to poll.
func textOf(browser context.Context, sel string) string {
	ctx, cancel := context.WithTimeout(browser, 10*time.Second)
	defer cancel()
	js := fmt.Sprintf(`(function(){var e=document.querySelector(%q);return e?e.innerText.trim():""})()`, sel)
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		return ""
	}
	return s
}

// click clicks the element sel finds, again if the console swapped the
// content of <main> between finding it and clicking it: every change on
// the hub re-renders it, and a node found just before is then gone
// ("Could not find node with given id"). chromedp reads the node's
// position before it sends the click, so a failed attempt clicked nothing.
func click(browser context.Context, sel string) {
	GinkgoHelper()
	Eventually(func() error {
		ctx, cancel := context.WithTimeout(browser, 10*time.Second)
		defer cancel()
		return chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
	}).Should(Succeed())
}

// screenshot writes the page as <name>.png into artifactDir.
func screenshot(browser context.Context, name string) {
	GinkgoHelper()
	png, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(artifactDir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(artifactDir, name+".png"), png, 0o644)).To(Succeed())
}

var consoleURL = regexp.MustCompile(`Console: (http://127\.0\.0\.1:\d+)/login\?secret=\S+`)

// startConsole runs `flotilla console --port 0` and returns its URL and
// its process.
func startConsole(ctx context.Context, kubeconfig string) (string, *framework.Process) {
	GinkgoHelper()
	p, err := framework.StartProcess(context.WithoutCancel(ctx), filepath.Join(*binDir, "flotilla"), "console", "--port", "0", "--kubeconfig", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _, _ = p.Stop(10 * time.Second) })
	Expect(p.WaitForOutput("Console: http", 2*time.Minute)).To(Succeed(), p.Tail(20))
	m := consoleURL.FindStringSubmatch(p.Output())
	Expect(m).NotTo(BeNil(), p.Output())
	return m[0][len("Console: "):], p
}

// dialogOpen says whether the console's confirmation dialog is open.
func dialogOpen(browser context.Context) bool {
	open, err := chromedp.Run(browser, chromedp.Evaluate[bool](`(function(){var d=document.getElementById("confirm");return !!(d&&d.open)})()`))
	return err == nil && open
}

// timelineMarkers are the boxes, in CSS pixels, of one timeline row's
// applied circle and available square, as the browser lays them out.
type timelineMarkers struct {
	Row                int
	Applied, Available [4]float64 // left, top, right, bottom
}

func (m timelineMarkers) overlap() bool {
	a, b := m.Applied, m.Available
	return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

// timelineBoxes measures the markers of the rows of the rollout timeline
// that have both.
func timelineBoxes(browser context.Context) []timelineMarkers {
	js := `(function(){var out=[];document.querySelectorAll("figure svg g").forEach(function(g,i){
		var c=g.querySelector("circle"),r=g.querySelector("rect");if(!c||!r)return;
		var a=c.getBoundingClientRect(),b=r.getBoundingClientRect();
		out.push({Row:i,Applied:[a.left,a.top,a.right,a.bottom],Available:[b.left,b.top,b.right,b.bottom]});});return out})()`
	ctx, cancel := context.WithTimeout(browser, 10*time.Second)
	defer cancel()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]timelineMarkers](js))
	if err != nil {
		return nil
	}
	return out
}

// settingsConfigMap is a ConfigMap at a version, for a rollout.
func settingsConfigMap(version string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  version: "` + version + `"
`
}

// statusOf is the HTTP status of a GET of url without cookies.
func statusOf(url string) int {
	GinkgoHelper()
	resp, err := http.Get(url)
	Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	return resp.StatusCode
}

// consoleBase is the scheme, host and port of a console URL.
func consoleBase(url string) string { return consoleURL.FindStringSubmatch("Console: " + url)[1] }

// informPolicy is the example policy set to inform, in a file.
func informPolicy() string {
	GinkgoHelper()
	example, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "examples", "policy-namespace.yaml"))
	Expect(err).NotTo(HaveOccurred())
	inform := regexp.MustCompile(`remediationAction: enforce`).ReplaceAll(example, []byte("remediationAction: inform"))
	file := filepath.Join(GinkgoT().TempDir(), "policy-inform.yaml")
	Expect(os.WriteFile(file, inform, 0o600)).To(Succeed())
	return file
}

// restrictedKubeconfig is a kubeconfig of a service account that may read
// clusters everywhere and ManifestWorks in namespace cluster1 only.
func restrictedKubeconfig(ctx context.Context, adminKubeconfig, dir string) string {
	GinkgoHelper()
	kube := devKube(adminKubeconfig)
	c := adminClient(adminKubeconfig)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer", Namespace: "default"}}
	Expect(c.Create(ctx, sa)).To(Succeed())
	Expect(c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-viewer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{clusterv1.GroupName}, Resources: []string{"managedclusters", "managedclustersets"}, Verbs: []string{"get", "list", "watch"}},
	}})).To(Succeed())
	Expect(c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet-viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fleet-viewer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "viewer", Namespace: "default"}}})).To(Succeed())
	Expect(c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "work-viewer", Namespace: "cluster1"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"}, Verbs: []string{"get", "list", "watch"}},
	}})).To(Succeed())
	Expect(c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "work-viewer", Namespace: "cluster1"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "work-viewer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "viewer", Namespace: "default"}}})).To(Succeed())
	tr, err := kube.CoreV1().ServiceAccounts("default").CreateToken(ctx, "viewer", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.LoadFromFile(adminKubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	out := clientcmdapi.NewConfig()
	out.Clusters["hub"] = cluster
	out.AuthInfos["viewer"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	out.Contexts["viewer"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "viewer"}
	out.CurrentContext = "viewer"
	path := filepath.Join(dir, "viewer.kubeconfig")
	Expect(clientcmd.WriteToFile(*out, path)).To(Succeed())
	Eventually(func() error {
		_, err := kube.RbacV1().RoleBindings("cluster1").Get(ctx, "work-viewer", metav1.GetOptions{})
		return client.IgnoreNotFound(err)
	}).Should(Succeed())
	return path
}
