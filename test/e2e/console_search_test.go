package e2e

import (
	"context"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/agent"
	"github.com/flotilla-io/flotilla/test/framework"
)

var _ = Describe("flotilla console in headless Chromium: search", func() {
	It("finds Pods a real agent indexed from the header's search box, links each to its cluster, pages with continue, shows the hub's message for a bad query, and nothing to a user the hub does not let see the cluster", func(ctx SpecContext) {
		browser, hub, dir, onHub := consoleHub(ctx)

		By("joining and accepting cluster1 (flotilla-agent, which indexes by default), which runs two Pods of image nginx:1.27")
		join := joinInfo(onHub("init", "-o", "json"))
		spoke, err := framework.Start(ctx, framework.Spoke)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		Expect(spoke.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agent.DefaultNamespace}})).To(Succeed())
		bootstrap := writeBootstrapKubeconfig(hub.Kubeconfig, join.URL, join.Token, filepath.Join(dir, "bootstrap.kubeconfig"))
		agentProc := startAgent(ctx, spoke, bootstrap, "cluster1")
		res := onHub("accept", "--clusters", "cluster1", "--wait", "--timeout", "3m")
		Expect(res.code).To(Equal(0), res.stderr, agentProc.Tail(30))
		for _, name := range []string{"finder-a", "finder-b"} {
			Expect(spoke.Client.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}})).To(Succeed())
		}

		By("searching from the fleet's header: the agent's index finds both Pods")
		base, _ := startConsole(ctx, hub.Kubeconfig)
		Expect(chromedp.Do(browser, chromedp.Navigate(base))).To(Succeed())
		Eventually(func() string { return textOf(browser, `h1`) }).Should(Equal("Fleet"))
		query := "kind=Pod image=nginx:1.27"
		Expect(chromedp.Do(browser, chromedp.SetValue(chromedp.CSS(`#search-q`), query))).To(Succeed())
		click(browser, `form.search button`)
		Eventually(func() string { return textOf(browser, `h1`) }).Should(Equal("Search"))
		Expect(chromedp.Run(browser, chromedp.Evaluate[string](`document.getElementById("search-q").value`))).To(Equal(query))
		row := func(name string) string { return `tr[data-object="cluster1/Pod/default/` + name + `"]` }
		// The agent indexes within moments; a new search shows what the index holds by then.
		searchURL := consoleBase(base) + "/search?q=" + url.QueryEscape(query)
		Eventually(func() string {
			if textOf(browser, row("finder-b")) == "" {
				_ = chromedp.Do(browser, chromedp.Navigate(searchURL))
			}
			return textOf(browser, row("finder-b"))
		}, time.Minute).ShouldNot(BeEmpty(), func() string { return textOf(browser, "main") + "\n" + agentProc.Tail(30) })
		Expect(textOf(browser, row("finder-a")+` .images`)).To(Equal("nginx:1.27"))
		Expect(textOf(browser, row("finder-a")+` .status`)).To(Equal("Pending"))
		Expect(textOf(browser, row("finder-a")+` .namespace`)).To(Equal("default"))
		Expect(textOf(browser, row("finder-a")+` .kind`)).To(Equal("Pod"))
		Expect(textOf(browser, row("finder-a")+` .age`)).To(HaveSuffix(" ago"))
		Expect(textOf(browser, `main code.cli`)).To(Equal("flotilla search '" + query + "'"))
		screenshot(browser, "search")

		By("one per page: the next page follows the hub's continue token to the other Pod, and ends there")
		Expect(chromedp.Do(browser, chromedp.Navigate(searchURL+"&limit=1"))).To(Succeed())
		Eventually(func() int { return countOf(browser, `#results tbody tr[data-object]`) }).Should(Equal(1))
		first := textOf(browser, `#results tbody th.name`)
		click(browser, `#next-page`)
		Eventually(func() string { return textOf(browser, `#results tbody th.name`) }).ShouldNot(Or(Equal(first), BeEmpty()))
		Expect([]string{first, textOf(browser, `#results tbody th.name`)}).To(ConsistOf("finder-a", "finder-b"))
		Expect(textOf(browser, `#next-page`)).To(BeEmpty())

		By("a result's cluster links to that cluster's view")
		Expect(chromedp.Do(browser, chromedp.Navigate(searchURL))).To(Succeed())
		click(browser, row("finder-a")+` .cluster a`)
		Eventually(func() string { return textOf(browser, `h1`) }).Should(ContainSubstring("cluster1"))
		Expect(chromedp.Run(browser, chromedp.Evaluate[string](`location.pathname`))).To(Equal("/clusters/cluster1"))

		By("a query the hub refuses shows its message as it is, as flotilla search prints it")
		bad := "kind=Pod status!=Running"
		Expect(chromedp.Do(browser, chromedp.Navigate(consoleBase(base)+"/search?q="+url.QueryEscape(bad)))).To(Succeed())
		Eventually(func() string { return textOf(browser, `#search-error`) }).Should(ContainSubstring(`query term "status!=Running"`))
		cli := onHub("search", bad)
		Expect(cli.code).NotTo(Equal(0))
		Expect(cli.stderr).To(ContainSubstring(textOf(browser, `#search-error`)))
		Expect(textOf(browser, `#results`)).To(BeEmpty())
		screenshot(browser, "search-error")

		By("a user who may not proxy to cluster1 nor search it finds nothing there")
		viewer := restrictedKubeconfig(ctx, hub.Kubeconfig, dir)
		viewerBase, _ := startConsole(ctx, viewer)
		other := startBrowser()
		Expect(chromedp.Do(other, chromedp.Navigate(viewerBase))).To(Succeed())
		Eventually(func() string { return textOf(other, `h1`) }).Should(Equal("Fleet"))
		Expect(chromedp.Do(other, chromedp.Navigate(consoleBase(viewerBase)+"/search?q="+url.QueryEscape(query)))).To(Succeed())
		Eventually(func() string { return textOf(other, `#results tbody`) }).Should(Equal("No objects found."))
	})

	It("says search is unavailable on a hub whose index is off", func(ctx SpecContext) {
		browser := startBrowser()
		hub, err := framework.StartHubProcess(ctx, *binDir, GinkgoT().TempDir(), 2*time.Minute, "--search-database", "off")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { hub.Stop(30 * time.Second) })
		base, _ := startConsole(ctx, hub.Kubeconfig)
		Expect(chromedp.Do(browser, chromedp.Navigate(base))).To(Succeed())
		Eventually(func() string { return textOf(browser, `h1`) }).Should(Equal("Fleet"))
		Expect(chromedp.Do(browser, chromedp.SetValue(chromedp.CSS(`#search-q`), "kind=Pod"))).To(Succeed())
		click(browser, `form.search button`)
		Eventually(func() string { return textOf(browser, `#search-error`) }).Should(HavePrefix("search is unavailable: the hub serves no search"))
		Expect(textOf(browser, `#results`)).To(BeEmpty())
	})
})

// countOf is the number of elements sel matches; it never waits.
func countOf(browser context.Context, sel string) int {
	ctx, cancel := context.WithTimeout(browser, 10*time.Second)
	defer cancel()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
	if err != nil {
		return -1
	}
	return n
}
