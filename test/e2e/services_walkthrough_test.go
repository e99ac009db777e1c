package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// servicesDoc is the page whose walkthrough the spec runs.
const servicesDoc = "../../docs/services.md"

// walkthroughHeading begins the walkthrough section of servicesDoc.
const walkthroughHeading = "## Walkthrough: export from two clusters, resolve from a third"

var _ = Describe("services walkthrough", func() {
	It("runs the commands of docs/services.md's walkthrough as written: two clusters export, the hub lists exports and imports, the third cluster's CoreDNS resolves the clusterset name", func(ctx SpecContext) {
		blocks := walkthroughBlocks()
		for _, b := range []string{"coredns", "dnsq"} {
			if _, err := os.Stat(filepath.Join(*binDir, b)); err != nil {
				Fail("bin/" + b + " is missing: the walkthrough needs `make coredns` (test-e2e builds it)")
			}
		}
		work := GinkgoT().TempDir()
		home := filepath.Join(work, "home")
		Expect(os.MkdirAll(home, 0o755)).To(Succeed())
		// The doc runs from the repository: bin/ is the binaries under test.
		Expect(os.Symlink(*binDir, filepath.Join(work, "bin"))).To(Succeed())
		sh := &docShell{dir: work, env: []string{"HOME=" + home}}
		devDir := filepath.Join(home, ".flotilla", "dev")
		DeferCleanup(func(ctx context.Context) {
			if pid, err := os.ReadFile(filepath.Join(work, "coredns.pid")); err == nil {
				_ = exec.Command("kill", strings.TrimSpace(string(pid))).Run()
			}
			runFlotilla(ctx, "dev", "down", "--dir", devDir, "--grace", "10s")
		})

		dnsName := "web.shop.svc.clusterset.local"
		for i, block := range blocks {
			switch {
			case strings.Contains(block, "dev up"):
				By("starting the fleet (the suite built the binaries: the block's make line is left out)")
				Expect(block).To(ContainSubstring("make build coredns"))
				res := sh.run(ctx, dropLines(block, "make "))
				Expect(res.code).To(Equal(0), res.stderr)

			case strings.Contains(block, "get serviceexports"):
				By("the hub lists both exports, Valid and without conflict, and one import of every member")
				Eventually(func(g Gomega) {
					res := sh.run(ctx, block)
					g.Expect(res.code).To(Equal(0), res.stderr)
					g.Expect(res.stdout).To(MatchRegexp(`(?m)^cluster1\s+shop\s+web\s+ClusterSetIP\s+http:80/TCP\s+2/2\s+storefront\s+none\s`))
					g.Expect(res.stdout).To(MatchRegexp(`(?m)^cluster2\s+shop\s+web\s+ClusterSetIP\s+http:80/TCP\s+2/2\s+storefront\s+none\s`))
					g.Expect(res.stdout).To(MatchRegexp(`(?m)^storefront\s+shop\s+web\s+ClusterSetIP\s+http:80/TCP\s+cluster1,cluster2\s+cluster1,cluster2,cluster3\s+4/4\s`))
				}, 90*time.Second, time.Second).Should(Succeed())

			case strings.Contains(block, "describe serviceimport"):
				res := sh.run(ctx, block)
				Expect(res.code).To(Equal(0), res.stderr)
				Expect(res.stdout).To(MatchRegexp(`Imported by:\s+cluster1, cluster2, cluster3`))
				Expect(res.stdout).To(ContainSubstring("Cluster cluster2:"))

			case strings.Contains(block, "bin/coredns"):
				By("CoreDNS against cluster3 answers the clusterset name with cluster3's cluster-set IP, and the SRV record of port http")
				started := time.Now()
				res := sh.run(ctx, block)
				AddReportEntry("the DNS block of the walkthrough, as written", res.stdout+res.stderr)
				ip := serviceImportIP(ctx, filepath.Join(devDir, "cluster3", "admin.kubeconfig"), "shop", "web")
				if !strings.Contains(res.stdout, "IN\tA\t"+ip) {
					// CoreDNS answers once its informers synced: ask again, as a user would.
					Eventually(func(g Gomega) {
						res = sh.run(ctx, dnsqLines(block))
						g.Expect(res.stdout).To(MatchRegexp(regexp.QuoteMeta(dnsName) + `\.\s+\d+\s+IN\s+A\s+` + regexp.QuoteMeta(ip)))
					}, 30*time.Second, time.Second).Should(Succeed())
					AddReportEntry("the clusterset name first resolved after", time.Since(started).Round(100*time.Millisecond).String())
				}
				Expect(res.stdout).To(MatchRegexp(`_http\._tcp\.web\.shop\.svc\.clusterset\.local\.\s+\d+\s+IN\s+SRV\s+\d+ \d+ 80 web\.shop\.svc\.clusterset\.local\.`))

			case strings.Contains(block, "cluster1.web.shop"):
				res := sh.run(ctx, block)
				Expect(res.code).To(Equal(0), res.stderr)
				Expect(res.stdout).To(ContainSubstring("status: NXDOMAIN"))

			case strings.Contains(block, "--clusters cluster2") && strings.Contains(block, "delete work web-export"):
				By("unexporting from cluster2: the import stays, with cluster1 alone")
				res := sh.run(ctx, block)
				Expect(res.code).To(Equal(0), res.stderr)
				Eventually(func(g Gomega) {
					res := sh.run(ctx, "bin/flotilla get serviceimports")
					g.Expect(res.stdout).To(MatchRegexp(`(?m)^storefront\s+shop\s+web\s+ClusterSetIP\s+http:80/TCP\s+cluster1\s+cluster1,cluster2,cluster3\s+2/2\s`))
				}, 60*time.Second, time.Second).Should(Succeed())

			case strings.Contains(block, "--clusters cluster1") && strings.Contains(block, "delete work web-export"):
				By("unexporting the last: the service goes from the set, and its name stops resolving")
				res := sh.run(ctx, block)
				Expect(res.code).To(Equal(0), res.stderr)
				Eventually(func(g Gomega) {
					res := sh.run(ctx, "bin/flotilla get serviceimports\n"+dnsqLines(block))
					g.Expect(res.stderr).To(ContainSubstring("No cluster set imports a service yet"))
					g.Expect(res.stdout).To(ContainSubstring("status: NXDOMAIN"))
				}, 60*time.Second, time.Second).Should(Succeed())

			case strings.Contains(block, "dev down"):
				By("cleaning up as the walkthrough does")
				res := sh.run(ctx, block)
				Expect(res.code).To(Equal(0), res.stderr)
				Expect(devDir).NotTo(BeAnExistingFile())

			default:
				res := sh.run(ctx, block)
				Expect(res.code).To(Equal(0), "block %d of the walkthrough:\n%s\n%s", i, block, res.stderr)
			}
		}
	})
})

// walkthroughBlocks are the ```sh blocks of the walkthrough section of
// docs/services.md, in order.
func walkthroughBlocks() []string {
	GinkgoHelper()
	doc, err := os.ReadFile(servicesDoc)
	Expect(err).NotTo(HaveOccurred())
	text := string(doc)
	start := strings.Index(text, "\n"+walkthroughHeading+"\n")
	Expect(start).To(BeNumerically(">=", 0), "docs/services.md has no section %q", walkthroughHeading)
	section := text[start+1:]
	if end := strings.Index(section[len(walkthroughHeading):], "\n## "); end >= 0 {
		section = section[:len(walkthroughHeading)+end]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```$").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	Expect(len(blocks)).To(BeNumerically(">=", 8), "the walkthrough's sh blocks: %q", blocks)
	return blocks
}

// dropLines removes the lines of block that begin with prefix.
func dropLines(block, prefix string) string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// dnsqLines are the dnsq lines of block.
func dnsqLines(block string) string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "bin/dnsq ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// docShell runs a doc's blocks with bash, one after the other in one
// directory, each seeing what the ones before exported, as in one
// terminal.
type docShell struct {
	dir string
	env []string
}

// run runs block with bash -e; what it exports is kept for the next.
func (s *docShell) run(ctx context.Context, block string) cliRun {
	GinkgoHelper()
	state := filepath.Join(s.dir, ".doc-env")
	script := "set -e\n[ -f " + state + " ] && . " + state + "\n" + block + "\nexport -p > " + state + "\n"
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), s.env...)
	// A block that starts a server in the background leaves it holding no
	// pipe of ours (the doc redirects its output): do not wait for it.
	cmd.WaitDelay = 5 * time.Second
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	} else if err != nil {
		Fail("run bash: " + err.Error())
	}
	GinkgoWriter.Printf("$ %s\n%s%s(exit %d)\n", strings.TrimSpace(block), out.String(), errOut.String(), code)
	return cliRun{code: code, stdout: out.String(), stderr: errOut.String()}
}

// serviceImportIP is the first spec.ips of ServiceImport ns/name in the
// cluster of kubeconfig, once it has one.
func serviceImportIP(ctx context.Context, kubeconfig, ns, name string) string {
	GinkgoHelper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	var ip string
	Eventually(func(g Gomega) {
		si := &unstructured.Unstructured{}
		si.SetGroupVersionKind(schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1beta1", Kind: "ServiceImport"})
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, si)).To(Succeed())
		ips, _, _ := unstructured.NestedStringSlice(si.Object, "spec", "ips")
		g.Expect(ips).NotTo(BeEmpty())
		ip = ips[0]
	}, 60*time.Second).Should(Succeed())
	return ip
}
