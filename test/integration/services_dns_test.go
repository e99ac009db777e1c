package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/flotilla-io/flotilla/internal/mcs"
	"github.com/flotilla-io/flotilla/test/framework"
)

// The DNS records of docs/services.md and ../shared/docs/mcs.md §7, served
// by stock CoreDNS (hack/coredns, run by test/framework) with its
// kubernetes plugin's `multicluster clusterset.local` option, from what the
// agents write into each cluster: three clusters of one set, two exporting
// (a, b), one importing only (c), each with a CoreDNS of its own that has
// exactly the RBAC docs/services.md gives it.
var _ = Describe("services dns", Ordered, func() {
	var (
		a, b, c *importCluster
		all     []*importCluster
		// servers are the CoreDNS addresses by cluster name.
		servers = map[string]string{}
		ns      string
	)

	BeforeAll(func(ctx SpecContext) {
		set := newImportSet(ctx)
		a, b, c = startImportCluster(ctx, "dns-a"), startImportCluster(ctx, "dns-b"), startImportCluster(ctx, "dns-c")
		all = []*importCluster{a, b, c}
		ns = "dns-" + utilrand.String(5)
		for _, sc := range all {
			setClusterSet(ctx, sc.name, set)
			Expect(sc.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			Expect(sc.c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})).To(Succeed())
			servers[sc.name] = startClusterDNS(sc, true).Addr
		}
	})

	// lookupIn asks cluster sc's CoreDNS.
	lookupIn := func(sc *importCluster, name string, qtype uint16) func() dnsAnswer {
		return lookup(servers[sc.name], name, qtype)
	}
	fqdn := func(name string) string { return name + "." + ns + ".svc.clusterset.local" }

	It("serves dns-version under clusterset.local, as CoreDNS does under every zone (its own schema 1.1.0, not the specification's 1.0.0)", func(ctx SpecContext) {
		for _, sc := range all {
			Eventually(lookupIn(sc, "dns-version.clusterset.local", dns.TypeTXT), "20s", "1s").Should(Equal(answer("NOERROR", "1.1.0")), sc.name)
		}
	})

	It("resolves a ClusterSetIP service to each cluster's own cluster-set IP, with SRV per named port targeting the service name, and keeps cluster.local as it was", func(ctx SpecContext) {
		By("Service web (ports http 80, metrics 9090) exported from a and b, two ready pods in a and one in b")
		start := time.Now()
		for i, sc := range []*importCluster{a, b} {
			createDNSService(ctx, sc, ns, "web", false, []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}, {Name: "metrics", Port: 9090},
			})
			for j := 1; j <= 2-i; j++ {
				runDNSPod(ctx, sc, ns, "web", fmt.Sprintf("web-%d", j), fmt.Sprintf("10.%d.0.%d", i+1, j), "", true)
			}
			exportDNSService(ctx, sc, ns, "web")
		}

		for _, sc := range all {
			si := eventuallyClusterSetIP(ctx, sc, ns, "web")
			By("in " + sc.name + ": A to its ServiceImport's spec.ips " + strings.Join(si.Spec.IPs, ","))
			Eventually(lookupIn(sc, fqdn("web"), dns.TypeA), "20s", "1s").Should(Equal(answer("NOERROR", si.Spec.IPs...)), sc.name)
			Eventually(lookupIn(sc, "_http._tcp."+fqdn("web"), dns.TypeSRV), "20s", "1s").Should(Equal(answer("NOERROR", "80 "+fqdn("web")+".")), sc.name)
			Eventually(lookupIn(sc, "_metrics._tcp."+fqdn("web"), dns.TypeSRV), "20s", "1s").Should(Equal(answer("NOERROR", "9090 "+fqdn("web")+".")), sc.name)
			By("in " + sc.name + ": a plain SRV query answers one record per port, with the service name as target")
			Eventually(lookupIn(sc, fqdn("web"), dns.TypeSRV), "20s", "1s").Should(Equal(answer("NOERROR", "80 "+fqdn("web")+".", "9090 "+fqdn("web")+".")), sc.name)
			Eventually(lookupIn(sc, "_http._udp."+fqdn("web"), dns.TypeSRV), "20s", "1s").Should(Equal(answer("NXDOMAIN")), sc.name)
			By("in " + sc.name + ": the cluster-set IP has a PTR record, the derived Service's")
			derived := mcs.DerivedServiceName(ns, "web")
			Eventually(lookupIn(sc, reverseName(si.Spec.IPs[0]), dns.TypePTR), "20s", "1s").Should(Equal(answer("NOERROR", derived+"."+ns+".svc.cluster.local.")), sc.name)
			By("in " + sc.name + ": no per-cluster name <clusterid>.web exists")
			for _, other := range all {
				Expect(lookupIn(sc, other.name+"."+fqdn("web"), dns.TypeA)()).To(Equal(answer("NXDOMAIN")), "%s asked for %s", sc.name, other.name)
			}
		}
		AddReportEntry("from the exports of web to its records in every cluster's CoreDNS", time.Since(start).Round(time.Millisecond).String())
		Expect(c.serviceImport(ctx, ns, "web")().Spec.IPs).NotTo(Equal(a.serviceImport(ctx, ns, "web")().Spec.IPs),
			"each cluster allocates its own cluster-set IP (the derived Service's ClusterIP)")

		By("cluster.local still answers the local Service in the exporters, and nothing in c, which has none")
		for _, sc := range []*importCluster{a, b} {
			local := &corev1.Service{}
			Expect(sc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, local)).To(Succeed())
			si := sc.serviceImport(ctx, ns, "web")()
			Expect(local.Spec.ClusterIPs).NotTo(Equal(si.Spec.IPs))
			Eventually(lookupIn(sc, "web."+ns+".svc.cluster.local", dns.TypeA), "20s", "1s").Should(Equal(answer("NOERROR", local.Spec.ClusterIPs...)), sc.name)
		}
		Expect(lookupIn(c, "web."+ns+".svc.cluster.local", dns.TypeA)()).To(Equal(answer("NXDOMAIN")))

		By("withdrawn from both exporters, the name is gone everywhere")
		for _, sc := range []*importCluster{a, b} {
			Expect(sc.c.Delete(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}})).To(Succeed())
		}
		for _, sc := range all {
			Eventually(lookupIn(sc, fqdn("web"), dns.TypeA), "30s", "1s").Should(Equal(answer("NXDOMAIN")), sc.name)
		}
		Eventually(lookupIn(a, "web."+ns+".svc.cluster.local", dns.TypeA), "20s", "1s").Should(HaveField("Rcode", "NOERROR"))
	})

	It("gives an unnamed port no _port._proto SRV name, and answers a plain SRV query with its port", func(ctx SpecContext) {
		createDNSService(ctx, a, ns, "solo", false, []corev1.ServicePort{{Port: 7000}})
		runDNSPod(ctx, a, ns, "solo", "solo-1", "10.1.1.1", "", true)
		exportDNSService(ctx, a, ns, "solo")
		si := eventuallyClusterSetIP(ctx, c, ns, "solo")
		Eventually(lookupIn(c, fqdn("solo"), dns.TypeA), "20s", "1s").Should(Equal(answer("NOERROR", si.Spec.IPs...)))
		Eventually(lookupIn(c, fqdn("solo"), dns.TypeSRV), "20s", "1s").Should(Equal(answer("NOERROR", "7000 "+fqdn("solo")+".")))
		for _, name := range []string{"_http._tcp.", "_7000._tcp."} {
			Expect(lookupIn(c, name+fqdn("solo"), dns.TypeSRV)()).To(Equal(answer("NXDOMAIN")), name)
		}
	})

	It("resolves a headless service to every ready endpoint of every cluster, with <hostname>.<clusterid> names and SRV per endpoint and named port", func(ctx SpecContext) {
		By("headless Service db (ports pg 5432, metrics 9187) exported from a (db-0, db-1) and b (db-0, a pod without hostname, and db-1 not ready)")
		ports := []corev1.ServicePort{{Name: "pg", Port: 5432}, {Name: "metrics", Port: 9187}}
		createDNSService(ctx, a, ns, "db", true, ports)
		runDNSPod(ctx, a, ns, "db", "db-0", "10.1.2.10", "db-0", true)
		runDNSPod(ctx, a, ns, "db", "db-1", "10.1.2.11", "db-1", true)
		createDNSService(ctx, b, ns, "db", true, ports)
		runDNSPod(ctx, b, ns, "db", "db-0", "10.2.2.10", "db-0", true)
		runDNSPod(ctx, b, ns, "db", "db-x", "10.2.2.12", "", true)
		runDNSPod(ctx, b, ns, "db", "db-1", "10.2.2.11", "db-1", false)
		exportDNSService(ctx, a, ns, "db")
		exportDNSService(ctx, b, ns, "db")

		// The ready endpoints, by their clusterset.local names.
		ready := map[string]string{
			"db-0." + a.name:      "10.1.2.10",
			"db-1." + a.name:      "10.1.2.11",
			"db-0." + b.name:      "10.2.2.10",
			"10-2-2-12." + b.name: "10.2.2.12",
		}
		var ips, pg, srv []string
		for host, ip := range ready {
			ips = append(ips, ip)
			pg = append(pg, "5432 "+host+"."+fqdn("db")+".")
			srv = append(srv, "5432 "+host+"."+fqdn("db")+".", "9187 "+host+"."+fqdn("db")+".")
		}
		for _, sc := range all {
			Eventually(func(g Gomega) {
				si := sc.serviceImport(ctx, ns, "db")()
				g.Expect(si).NotTo(BeNil())
				g.Expect(si.Spec.Type).To(Equal(mcsv1beta1.Headless))
				g.Expect(addressesFrom(sc.importSlices(ctx, ns, "db")(), a.name)).To(HaveLen(2))
				g.Expect(addressesFrom(sc.importSlices(ctx, ns, "db")(), b.name)).To(HaveLen(3))
			}, "60s").Should(Succeed(), "the import of db in %s", sc.name)

			By("in " + sc.name + ": A per ready endpoint across the set, none for the pod not ready")
			Eventually(lookupIn(sc, fqdn("db"), dns.TypeA), "20s", "1s").Should(Equal(answer("NOERROR", ips...)), sc.name)
			for host, ip := range ready {
				Expect(lookupIn(sc, host+"."+fqdn("db"), dns.TypeA)()).To(Equal(answer("NOERROR", ip)), "%s asked for %s", sc.name, host)
			}
			Expect(lookupIn(sc, "db-1."+b.name+"."+fqdn("db"), dns.TypeA)()).To(Equal(answer("NXDOMAIN")), "the pod not ready, asked in %s", sc.name)
			Expect(lookupIn(sc, "db-0.nowhere."+fqdn("db"), dns.TypeA)()).To(Equal(answer("NXDOMAIN")), "a cluster not in the set, asked in %s", sc.name)
			By("in " + sc.name + ": SRV per ready endpoint and named port, targeting its <hostname>.<clusterid> name")
			Expect(lookupIn(sc, "_pg._tcp."+fqdn("db"), dns.TypeSRV)()).To(Equal(answer("NOERROR", pg...)), sc.name)
			Expect(lookupIn(sc, fqdn("db"), dns.TypeSRV)()).To(Equal(answer("NOERROR", srv...)), sc.name)
			By("in " + sc.name + ": no per-cluster name <clusterid>.db exists")
			for _, other := range all {
				Expect(lookupIn(sc, other.name+"."+fqdn("db"), dns.TypeA)()).To(Equal(answer("NXDOMAIN")), "%s asked for %s", sc.name, other.name)
			}
		}

		By("b's db-1 ready: it resolves everywhere")
		setDNSPodReady(ctx, b, ns, "db-1", true)
		for _, sc := range all {
			Eventually(lookupIn(sc, "db-1."+b.name+"."+fqdn("db"), dns.TypeA), "30s", "1s").Should(Equal(answer("NOERROR", "10.2.2.11")), sc.name)
		}
	})

	It("resolves a headless IPv6 or dual-stack service to AAAA records (and A ones for its IPv4 endpoints), with <hostname>.<clusterid> names", func(ctx SpecContext) {
		// The spokes' API servers have an IPv4 service CIDR only, so that no
		// Service gets an IPv6 cluster IP (nor a derived Service an IPv6
		// cluster-set IP); a headless Service without selector may have any
		// families, its endpoints written as an endpoint controller would.
		By("headless Service v6 (IPv6) exported from a (v6-0, v6-1) and b (v6-0); dual (IPv4 and IPv6) from b")
		port := []corev1.ServicePort{{Name: "tcp", Port: 8080}}
		createHeadlessWithEndpoints(ctx, a, ns, "v6", []corev1.IPFamily{corev1.IPv6Protocol}, port, map[discoveryv1.AddressType][]discoveryv1.Endpoint{
			discoveryv1.AddressTypeIPv6: {dnsEndpoint("fd00:1::10", "v6-0"), dnsEndpoint("fd00:1::11", "v6-1")},
		})
		createHeadlessWithEndpoints(ctx, b, ns, "v6", []corev1.IPFamily{corev1.IPv6Protocol}, port, map[discoveryv1.AddressType][]discoveryv1.Endpoint{
			discoveryv1.AddressTypeIPv6: {dnsEndpoint("fd00:2::10", "v6-0")},
		})
		createHeadlessWithEndpoints(ctx, b, ns, "dual", []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}, port, map[discoveryv1.AddressType][]discoveryv1.Endpoint{
			discoveryv1.AddressTypeIPv4: {dnsEndpoint("10.2.9.10", "dual-0")},
			discoveryv1.AddressTypeIPv6: {dnsEndpoint("fd00:2::20", "dual-0")},
		})
		for _, sc := range []*importCluster{a, b} {
			exportDNSService(ctx, sc, ns, "v6")
		}
		exportDNSService(ctx, b, ns, "dual")

		for _, sc := range all {
			Eventually(func(g Gomega) {
				items := sc.importSlices(ctx, ns, "v6")()
				g.Expect(addressesFrom(items, a.name)).To(Equal([]string{"fd00:1::10", "fd00:1::11"}))
				g.Expect(addressesFrom(items, b.name)).To(Equal([]string{"fd00:2::10"}))
				for _, s := range items {
					g.Expect(s.AddressType).To(Equal(discoveryv1.AddressTypeIPv6))
				}
				g.Expect(sc.importSlices(ctx, ns, "dual")()).To(HaveLen(2))
			}, "60s").Should(Succeed(), "the imports of v6 and dual in %s", sc.name)

			By("in " + sc.name + ": AAAA per endpoint across the set, and per <hostname>.<clusterid>")
			Eventually(lookupIn(sc, fqdn("v6"), dns.TypeAAAA), "20s", "1s").Should(Equal(answer("NOERROR", "fd00:1::10", "fd00:1::11", "fd00:2::10")), sc.name)
			Expect(lookupIn(sc, "v6-0."+a.name+"."+fqdn("v6"), dns.TypeAAAA)()).To(Equal(answer("NOERROR", "fd00:1::10")), sc.name)
			Expect(lookupIn(sc, "v6-1."+a.name+"."+fqdn("v6"), dns.TypeAAAA)()).To(Equal(answer("NOERROR", "fd00:1::11")), sc.name)
			Expect(lookupIn(sc, "v6-0."+b.name+"."+fqdn("v6"), dns.TypeAAAA)()).To(Equal(answer("NOERROR", "fd00:2::10")), sc.name)
			Expect(lookupIn(sc, fqdn("v6"), dns.TypeA)()).To(Equal(answer("NOERROR")), "an IPv6-only service has no A record, asked in %s", sc.name)
			Expect(lookupIn(sc, "_tcp._tcp."+fqdn("v6"), dns.TypeSRV)()).To(Equal(answer("NOERROR",
				"8080 v6-0."+a.name+"."+fqdn("v6")+".", "8080 v6-1."+a.name+"."+fqdn("v6")+".", "8080 v6-0."+b.name+"."+fqdn("v6")+".")), sc.name)

			By("in " + sc.name + ": the dual-stack service has an A and an AAAA record, under both names")
			Eventually(lookupIn(sc, fqdn("dual"), dns.TypeAAAA), "20s", "1s").Should(Equal(answer("NOERROR", "fd00:2::20")), sc.name)
			Expect(lookupIn(sc, fqdn("dual"), dns.TypeA)()).To(Equal(answer("NOERROR", "10.2.9.10")), sc.name)
			Expect(lookupIn(sc, "dual-0."+b.name+"."+fqdn("dual"), dns.TypeAAAA)()).To(Equal(answer("NOERROR", "fd00:2::20")), sc.name)
			Expect(lookupIn(sc, "dual-0."+b.name+"."+fqdn("dual"), dns.TypeA)()).To(Equal(answer("NOERROR", "10.2.9.10")), sc.name)
		}
	})

	It("answers NXDOMAIN for a headless service with no ready endpoint, and its address once one is ready", func(ctx SpecContext) {
		createDNSService(ctx, a, ns, "idle", true, []corev1.ServicePort{{Name: "tcp", Port: 1234}})
		runDNSPod(ctx, a, ns, "idle", "idle-0", "10.1.3.10", "idle-0", false)
		exportDNSService(ctx, a, ns, "idle")
		for _, sc := range all {
			Eventually(sc.serviceImport(ctx, ns, "idle"), "30s").ShouldNot(BeNil(), sc.name)
			Eventually(lookupIn(sc, fqdn("idle"), dns.TypeA), "20s", "1s").Should(Equal(answer("NXDOMAIN")), sc.name)
			Expect(lookupIn(sc, "idle-0."+a.name+"."+fqdn("idle"), dns.TypeA)()).To(Equal(answer("NXDOMAIN")), sc.name)
		}
		setDNSPodReady(ctx, a, ns, "idle-0", true)
		for _, sc := range all {
			Eventually(lookupIn(sc, fqdn("idle"), dns.TypeA), "30s", "1s").Should(Equal(answer("NOERROR", "10.1.3.10")), sc.name)
		}
	})

	It("answers NXDOMAIN under clusterset.local for a Service nobody exports, in every cluster, while cluster.local answers it where it is", func(ctx SpecContext) {
		createDNSService(ctx, a, ns, "private", false, []corev1.ServicePort{{Name: "http", Port: 80}})
		runDNSPod(ctx, a, ns, "private", "private-1", "10.1.4.1", "", true)
		local := &corev1.Service{}
		Expect(a.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "private"}, local)).To(Succeed())
		Eventually(lookupIn(a, "private."+ns+".svc.cluster.local", dns.TypeA), "20s", "1s").Should(Equal(answer("NOERROR", local.Spec.ClusterIPs...)))
		for _, sc := range all {
			for range 20 {
				Expect(lookupIn(sc, fqdn("private"), dns.TypeA)()).To(Equal(answer("NXDOMAIN")), sc.name)
			}
		}
	})

	It("answers nothing under clusterset.local to a CoreDNS without list and watch on serviceimports, as docs/services.md warns", func(ctx SpecContext) {
		createDNSService(ctx, a, ns, "guarded", false, []corev1.ServicePort{{Name: "http", Port: 80}})
		exportDNSService(ctx, a, ns, "guarded")
		si := eventuallyClusterSetIP(ctx, c, ns, "guarded")
		Eventually(lookupIn(c, fqdn("guarded"), dns.TypeA), "20s", "1s").Should(Equal(answer("NOERROR", si.Spec.IPs...)))
		bare := startClusterDNS(c, false)
		Eventually(lookup(bare.Addr, "kubernetes.default.svc.cluster.local", dns.TypeA), "20s", "1s").Should(HaveField("Rcode", "NOERROR"))
		Eventually(bare.Output, "20s").Should(ContainSubstring(`serviceimports.multicluster.x-k8s.io is forbidden`))
		for range 5 {
			Expect(lookup(bare.Addr, fqdn("guarded"), dns.TypeA)()).NotTo(Equal(answer("NOERROR", si.Spec.IPs...)))
		}
	})
})

// dnsAnswer is a DNS answer reduced to what the specs compare: the rcode
// and the answer records, sorted, each as A/AAAA "<ip>", SRV "<port>
// <target>", TXT "<text>" or PTR "<target>".
type dnsAnswer struct {
	Rcode   string
	Records []string
}

// answer is the dnsAnswer with rcode and records.
func answer(rcode string, records ...string) dnsAnswer {
	r := slices.Clone(records)
	slices.Sort(r)
	if len(r) == 0 {
		r = nil
	}
	return dnsAnswer{Rcode: rcode, Records: r}
}

// lookup asks server for name's qtype records over UDP, and over TCP when
// the answer did not fit (as resolvers do); an unanswered
// question gives an rcode naming the error, so that Eventually asks again.
func lookup(server, name string, qtype uint16) func() dnsAnswer {
	return func() dnsAnswer {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), qtype)
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, server)
		if err == nil && r.Truncated {
			// As a resolver does: the whole answer over TCP.
			r, _, err = (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, server)
		}
		if err != nil {
			return dnsAnswer{Rcode: "no answer: " + err.Error()}
		}
		var records []string
		for _, rr := range r.Answer {
			switch rr := rr.(type) {
			case *dns.A:
				records = append(records, rr.A.String())
			case *dns.AAAA:
				records = append(records, rr.AAAA.String())
			case *dns.SRV:
				records = append(records, fmt.Sprintf("%d %s", rr.Port, rr.Target))
			case *dns.TXT:
				records = append(records, strings.Join(rr.Txt, ""))
			case *dns.PTR:
				records = append(records, rr.Ptr)
			default:
				records = append(records, rr.String())
			}
		}
		return answer(dns.RcodeToString[r.Rcode], records...)
	}
}

// reverseName is ip's name under in-addr.arpa or ip6.arpa.
func reverseName(ip string) string {
	name, err := dns.ReverseAddr(ip)
	Expect(err).NotTo(HaveOccurred())
	return name
}

// upstreamCoreDNSRules are the rules of the ClusterRole system:coredns that
// kubeadm gives a cluster's CoreDNS: what it reads for cluster.local.
var upstreamCoreDNSRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{discoveryv1.GroupName}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
}

// startClusterDNS starts CoreDNS against cluster sc as ServiceAccount
// kube-system/coredns with kubeadm's system:coredns, and, when clusterset
// is set, the RBAC of docs/services.md. It stops when the enclosing
// container ends.
func startClusterDNS(sc *importCluster, clusterset bool) *framework.CoreDNS {
	GinkgoHelper()
	ctx := context.Background()
	sa := "coredns"
	if !clusterset {
		sa = "coredns-bare"
	}
	Expect(client.IgnoreAlreadyExists(sc.c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: sa}}))).To(Succeed())
	Expect(client.IgnoreAlreadyExists(sc.c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"}, Rules: upstreamCoreDNSRules}))).To(Succeed())
	Expect(client.IgnoreAlreadyExists(sc.c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "system:coredns:" + sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:coredns"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: metav1.NamespaceSystem, Name: sa}},
	}))).To(Succeed())
	if clusterset {
		for _, o := range docsCoreDNSRBAC() {
			Expect(client.IgnoreAlreadyExists(sc.c.Create(ctx, o))).To(Succeed(), "apply %s %s of docs/services.md", o.GetKind(), o.GetName())
		}
	}
	kube, err := kubernetes.NewForConfig(sc.env.spoke.ControlPlane.Config)
	Expect(err).NotTo(HaveOccurred())
	var tr *authenticationv1.TokenRequest
	Eventually(func() error {
		tr, err = kube.CoreV1().ServiceAccounts(metav1.NamespaceSystem).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
		}, metav1.CreateOptions{})
		return err
	}).Should(Succeed())
	kc := clientcmdapi.NewConfig()
	kc.Clusters["spoke"] = &clientcmdapi.Cluster{Server: sc.env.spoke.URL, CertificateAuthorityData: sc.env.spoke.CAData}
	kc.AuthInfos["coredns"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["spoke"] = &clientcmdapi.Context{Cluster: "spoke", AuthInfo: "coredns"}
	kc.CurrentContext = "spoke"
	path := filepath.Join(GinkgoT().TempDir(), sa+".kubeconfig")
	Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())

	d, err := framework.StartCoreDNS(ctx, path)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		specLog.Println("CoreDNS of " + sc.name + ":\n" + d.Output())
		d.Stop()
	})
	return d
}

// docsCoreDNSRBAC are the objects of the first yaml block of the section
// "DNS: clusterset.local with CoreDNS" of docs/services.md: what the docs
// tell a cluster's admin to apply for CoreDNS.
func docsCoreDNSRBAC() []*unstructured.Unstructured {
	GinkgoHelper()
	data, err := os.ReadFile("../../docs/services.md")
	Expect(err).NotTo(HaveOccurred())
	_, section, ok := strings.Cut(string(data), "\n## DNS: clusterset.local with CoreDNS\n")
	Expect(ok).To(BeTrue(), "docs/services.md has no section \"## DNS: clusterset.local with CoreDNS\"")
	_, block, ok := strings.Cut(section, "\n```yaml\n")
	Expect(ok).To(BeTrue(), "the DNS section of docs/services.md has no yaml block")
	block, _, _ = strings.Cut(block, "\n```")
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(block), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); err != nil {
			Expect(err.Error()).To(Equal("EOF"))
			break
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
	Expect(objs).NotTo(BeEmpty())
	return objs
}

// createDNSService creates Service ns/name of pods app=<name> in sc,
// headless or not.
func createDNSService(ctx context.Context, sc *importCluster, ns, name string, headless bool, ports []corev1.ServicePort) {
	GinkgoHelper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: ports},
	}
	if headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	Expect(sc.c.Create(ctx, svc)).To(Succeed())
}

// createHeadlessWithEndpoints creates in sc headless Service ns/name
// without selector, of families, and per address type an EndpointSlice of
// its endpoints, as an endpoint controller other than the agent would.
func createHeadlessWithEndpoints(ctx context.Context, sc *importCluster, ns, name string, families []corev1.IPFamily, ports []corev1.ServicePort,
	endpoints map[discoveryv1.AddressType][]discoveryv1.Endpoint) {
	GinkgoHelper()
	policy := corev1.IPFamilyPolicySingleStack
	if len(families) > 1 {
		policy = corev1.IPFamilyPolicyRequireDualStack
	}
	Expect(sc.c.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, IPFamilies: families, IPFamilyPolicy: &policy, Ports: ports},
	})).To(Succeed())
	for at, eps := range endpoints {
		var eports []discoveryv1.EndpointPort
		for _, p := range ports {
			eports = append(eports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(p.Port), Protocol: ptr.To(corev1.ProtocolTCP)})
		}
		Expect(sc.c.Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + strings.ToLower(string(at)), Labels: map[string]string{
				discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "endpoints.example.com",
			}},
			AddressType: at, Endpoints: eps, Ports: eports,
		})).To(Succeed())
	}
}

// dnsEndpoint is a ready endpoint at ip with hostname.
func dnsEndpoint(ip, hostname string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Hostname: ptr.To(hostname), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}
}

// exportDNSService creates ServiceExport ns/name in sc.
func exportDNSService(ctx context.Context, sc *importCluster, ns, name string) {
	GinkgoHelper()
	Expect(sc.c.Create(ctx, &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
}

// runDNSPod runs pod ns/pod of app in sc as a kubelet would report it:
// Running at ip, ready or not; hostname (with the Service as subdomain)
// gives its endpoint that hostname.
func runDNSPod(ctx context.Context, sc *importCluster, ns, app, pod, ip, hostname string, ready bool) {
	GinkgoHelper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
	if hostname != "" {
		p.Spec.Hostname, p.Spec.Subdomain = hostname, app
	}
	// The namespace's default ServiceAccount comes with its controller.
	Eventually(func() error { return sc.c.Create(ctx, p.DeepCopy()) }).Should(Succeed())
	Expect(sc.c.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: podReadyStatus(ready), LastTransitionTime: metav1.Now()}},
	}
	Expect(sc.c.Status().Update(ctx, p)).To(Succeed())
}

// setDNSPodReady sets pod ns/pod's Ready condition in sc.
func setDNSPodReady(ctx context.Context, sc *importCluster, ns, pod string, ready bool) {
	GinkgoHelper()
	Eventually(func() error {
		p := &corev1.Pod{}
		if err := sc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, p); err != nil {
			return err
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: podReadyStatus(ready), LastTransitionTime: metav1.Now()}}
		return sc.c.Status().Update(ctx, p)
	}).Should(Succeed())
}

func podReadyStatus(ready bool) corev1.ConditionStatus {
	if ready {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

// eventuallyClusterSetIP waits until sc has ServiceImport ns/name of type
// ClusterSetIP with its cluster-set IPs, and returns it.
func eventuallyClusterSetIP(ctx context.Context, sc *importCluster, ns, name string) *mcsv1beta1.ServiceImport {
	GinkgoHelper()
	var si *mcsv1beta1.ServiceImport
	Eventually(func(g Gomega) {
		si = sc.serviceImport(ctx, ns, name)()
		g.Expect(si).NotTo(BeNil(), "no ServiceImport %s/%s in %s", ns, name, sc.name)
		g.Expect(si.Spec.Type).To(Equal(mcsv1beta1.ClusterSetIP))
		g.Expect(si.Spec.IPs).NotTo(BeEmpty())
	}, "60s").Should(Succeed())
	return si
}
