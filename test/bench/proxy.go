package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent"
	agentproxy "github.com/flotilla-io/flotilla/agent/proxy"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

var (
	proxyTunnels  = flag.String("proxy-tunnels", "100", "comma-separated numbers of idle tunnels whose hub memory the proxy scenario measures")
	proxyRequests = flag.Int("proxy-requests", 500, "GETs timed through the hub and straight to the spoke")
)

// benchProxy times a GET through the cluster proxy against the same GET
// straight to the spoke, the throughput of a large LIST through it, and
// the hub's memory per idle tunnel.
//
// The hub is the pprof hub (test/bench/pprofhub, the same hub.Run as
// flotilla-hub) so that its live heap can be read after a GC: RSS alone
// moves by more than 100 tunnels take as the runtime returns memory.
func benchProxy(ctx context.Context, e *env) error {
	quietKlog()
	var cl cleanups
	defer cl.run()
	pb, counts, err := startProxyFleet(ctx, e, &cl)
	if err != nil {
		return err
	}
	for _, count := range counts {
		if err := pb.tunnelMemory(ctx, count); err != nil {
			return err
		}
	}
	// The latency and LIST figures go through the first cluster's tunnel.
	closeFirst, err := pb.openTunnels(ctx, 1)
	if err != nil {
		return err
	}
	cl.add(func() { _ = closeFirst() })
	pc, err := pb.clients(ctx)
	if err != nil {
		return err
	}
	if err := pb.timeGets(ctx, pc); err != nil {
		return err
	}
	if err := pb.profileGets(ctx, pc); err != nil {
		return err
	}
	return pb.timeLists(ctx, pc)
}

// proxyBench is what the proxy scenario's steps share: the hub under
// test, the clusters joined to it, and the spoke every one applies into.
type proxyBench struct {
	procs     *hubAndSpoke
	hut       *hubUnderTest
	hubClient client.Client
	names     []string
	// hubCfgs are the hub configurations of the clusters' agents (their
	// client certificates), spokeCfg the spoke's admin's.
	hubCfgs  []*rest.Config
	spokeCfg *rest.Config
	// spoke is the spoke's admin client, at 200 requests a second.
	spoke kubernetes.Interface
}

// startProxyFleet starts the pprof hub and a spoke, and joins as many
// clusters as the most tunnels -proxy-tunnels asks for, each with an agent
// that runs no tunnel: the benchmark opens the tunnels itself, with each
// agent's client certificate, so that it can close them again.
func startProxyFleet(ctx context.Context, e *env, cl *cleanups) (*proxyBench, []int, error) {
	bin, err := buildPprofHub(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	procs, err := startHubAndSpokeWith(ctx, e, "proxy", filepath.Dir(bin), "--mode", "all")
	if err != nil {
		return nil, nil, err
	}
	cl.add(procs.stop)
	pb := &proxyBench{procs: procs, hut: &hubUnderTest{HubProcess: procs.hub, pprofDirs: []string{filepath.Join(e.workDir, "proxy-hub")}}}
	bootstrap, err := bootstrapKubeconfig(procs.hub.Kubeconfig, procs.join.URL, procs.join.Token, filepath.Join(e.workDir, "proxy-bootstrap.kubeconfig"))
	if err != nil {
		return nil, nil, err
	}
	if pb.hubClient, err = adminClient(procs.hub.Kubeconfig); err != nil {
		return nil, nil, err
	}
	counts, err := tunnelCounts(*proxyTunnels)
	if err != nil {
		return nil, nil, err
	}
	pb.names = clusterNames("proxy", slices.Max(counts))
	stopAgents, err := startAgents(ctx, pb.names, []string{procs.spoke.Kubeconfig}, bootstrap, 0)
	if err != nil {
		return nil, nil, err
	}
	cl.add(stopAgents)
	if _, err := acceptAll(ctx, procs.hub, pb.hubClient, pb.names); err != nil {
		return nil, nil, err
	}
	return pb, counts, pb.readAgentConfigs(ctx)
}

// readAgentConfigs reads the spoke's configuration and, from the spoke,
// each agent's hub configuration.
func (pb *proxyBench) readAgentConfigs(ctx context.Context) error {
	var err error
	if pb.spokeCfg, err = clientcmd.BuildConfigFromFlags("", pb.procs.spoke.Kubeconfig); err != nil {
		return err
	}
	// The spoke's admin client creates the LIST's 2,000 objects: not at
	// client-go's default 5 a second.
	spokeAdmin := rest.CopyConfig(pb.spokeCfg)
	spokeAdmin.QPS, spokeAdmin.Burst = 200, 400
	pb.spoke = kubernetes.NewForConfigOrDie(spokeAdmin)
	pb.hubCfgs = make([]*rest.Config, len(pb.names))
	for i, name := range pb.names {
		if pb.hubCfgs[i], err = agentHubConfig(ctx, pb.spoke, name, pb.procs.join.URL); err != nil {
			return err
		}
	}
	return nil
}

// openTunnels opens the tunnels of the first count clusters and waits
// until the hub says each is connected; the returned func closes them and
// waits until the hub says each is not.
func (pb *proxyBench) openTunnels(ctx context.Context, count int) (closeAll func() error, err error) {
	tunnelCtx, stop := context.WithCancel(ctx)
	for i := range count {
		go func() {
			_ = agentproxy.Run(tunnelCtx, agentproxy.Config{ClusterName: pb.names[i], AgentID: "bench", Hub: pb.hubCfgs[i], Spoke: pb.spokeCfg})
		}()
	}
	closeAll = func() error {
		stop()
		return waitAllClusters(ctx, pb.hubClient, pb.names[:count], "tunnel closed", 10*time.Minute, func(mc *clusterv1.ManagedCluster) bool {
			return !meta.IsStatusConditionTrue(mc.Status.Conditions, tunnel.ConditionConnected)
		})
	}
	err = waitAllClusters(ctx, pb.hubClient, pb.names[:count], "TunnelConnected", 10*time.Minute, func(mc *clusterv1.ManagedCluster) bool {
		return meta.IsStatusConditionTrue(mc.Status.Conditions, tunnel.ConditionConnected)
	})
	if err != nil {
		stop()
	}
	return closeAll, err
}

// tunnelMemory prints the memory of count idle tunnels: the hub's with
// them open less its own right after they closed, both read in the same
// steady state of the fleet (whose heartbeats, status writes and caches
// move the hub's heap by more than 100 tunnels take), each after a pause.
// The ManagedClusters' status has a TunnelConnected condition both times,
// True and then False.
func (pb *proxyBench) tunnelMemory(ctx context.Context, count int) error {
	closeAll, err := pb.openTunnels(ctx, count)
	if err != nil {
		return err
	}
	if err := pause(ctx, 5*time.Second); err != nil {
		return err
	}
	withTunnels, err := readHubMemory(ctx, pb.hut)
	if err != nil {
		return err
	}
	if err := closeAll(); err != nil {
		return err
	}
	if err := pause(ctx, 5*time.Second); err != nil {
		return err
	}
	without, err := readHubMemory(ctx, pb.hut)
	if err != nil {
		return err
	}
	per := func(a, b int64) string { return fmt.Sprintf("%.1f KiB", float64(a-b)/float64(count)/1024) }
	row(fmt.Sprintf("hub memory per idle tunnel, %d tunnels: live heap after GC", count), per(withTunnels.heap, without.heap), "< 50 KiB")
	row(fmt.Sprintf("hub memory per idle tunnel, %d tunnels: goroutine stacks", count), per(withTunnels.stacks, without.stacks),
		fmt.Sprintf("%.1f goroutines each", float64(withTunnels.goroutines-without.goroutines)/float64(count)))
	row(fmt.Sprintf("hub memory per idle tunnel, %d tunnels: heap + stacks", count), per(withTunnels.heap+withTunnels.stacks, without.heap+without.stacks), "< 50 KiB")
	row(fmt.Sprintf("hub memory per idle tunnel, %d tunnels: RSS (noisy)", count), per(withTunnels.rss, without.rss), "")
	return nil
}

// proxyClients are the clients the requests through the first cluster's
// tunnel are timed with: through the hub as the hub's admin, straight to
// the spoke as the spoke's admin, and the two parts a GET through the hub
// is made of.
type proxyClients struct {
	// through and direct are the configurations of viaHub and straight.
	through, direct  *rest.Config
	viaHub, straight kubernetes.Interface
	// onHub is the hub's admin on the hub itself; asAgent the spoke's
	// admin impersonating as the agent does.
	onHub, asAgent kubernetes.Interface
}

func (pb *proxyBench) clients(ctx context.Context) (*proxyClients, error) {
	hubAdmin, err := clientcmd.BuildConfigFromFlags("", pb.procs.hub.Kubeconfig)
	if err != nil {
		return nil, err
	}
	if err := grantHubAdminsOn(ctx, pb.spoke); err != nil {
		return nil, err
	}
	through := rest.CopyConfig(hubAdmin)
	through.Host = strings.TrimSuffix(hubAdmin.Host, "/") + tunnel.ProxyPath(pb.names[0])
	through.QPS, through.Burst = -1, 0
	direct := rest.CopyConfig(pb.spokeCfg)
	direct.QPS, direct.Burst = -1, 0
	ownCfg := rest.CopyConfig(hubAdmin)
	ownCfg.QPS, ownCfg.Burst = -1, 0
	impersonating := rest.CopyConfig(direct)
	impersonating.Impersonate = rest.ImpersonationConfig{UserName: "flotilla:bench-admin", Groups: []string{"flotilla:system:masters", "flotilla:system:authenticated"}}
	return &proxyClients{
		through: through, direct: direct,
		viaHub: kubernetes.NewForConfigOrDie(through), straight: kubernetes.NewForConfigOrDie(direct),
		onHub: kubernetes.NewForConfigOrDie(ownCfg), asAgent: kubernetes.NewForConfigOrDie(impersonating),
	}, nil
}

// getDefault GETs the default namespace.
func getDefault(ctx context.Context, c kubernetes.Interface) error {
	_, err := c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	return err
}

// timeGets times -proxy-requests GETs through the hub against the same
// GETs straight to the spoke, and the two parts a GET through the hub is
// made of: the hub's own request handling (a GET of /version, which
// passes the hub's filters, authentication and authorization as the door
// does, and reads no storage), and the spoke's with the impersonation the
// agent asks for (which the spoke authorizes).
func (pb *proxyBench) timeGets(ctx context.Context, pc *proxyClients) error {
	getVersion := func(c kubernetes.Interface) error {
		_, err := c.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
		return err
	}
	get := func(c kubernetes.Interface) error { return getDefault(ctx, c) }
	kinds := []struct {
		what string
		cs   kubernetes.Interface
		get  func(kubernetes.Interface) error
	}{
		{"GET through the hub", pc.viaHub, get},
		{"GET straight to the spoke", pc.straight, get},
		{"  GET /version of the hub (its filters' share)", pc.onHub, getVersion},
		{"  GET straight to the spoke, impersonating as the agent does", pc.asAgent, get},
	}
	// The first 20 rounds open connections.
	times, err := takeTurns(*proxyRequests+20, 20, len(kinds), func(k int) error {
		if err := kinds[k].get(kinds[k].cs); err != nil {
			return fmt.Errorf("%s: %w", kinds[k].what, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k, kind := range kinds {
		row(kind.what+", p50 / p99", fmt.Sprintf("%s / %s", msText(percentile(times[k], 50)), msText(percentile(times[k], 99))), "")
	}
	hp50, dp50 := percentile(times[0], 50), percentile(times[1], 50)
	row("GET through the hub / straight, p50", fmt.Sprintf("%.2f×", float64(hp50)/float64(dp50)), "≤ 1.5×")
	// The spoke's admin is in system:masters, which the spoke's RBAC
	// never evaluates; a hub user through the hub is evaluated there.
	row("GET through the hub / straight as the same spoke user, p50", fmt.Sprintf("%.2f×", float64(hp50)/float64(percentile(times[3], 50))), "")
	row("  through the hub − hub's own − spoke impersonated, p50 (the tunnel's hops)", msText(hp50-percentile(times[2], 50)-percentile(times[3], 50)), "")
	return nil
}

// profileGets, with -pprof-dir, takes a CPU profile of the hub while GETs
// go through it.
func (pb *proxyBench) profileGets(ctx context.Context, pc *proxyClients) error {
	if *fleetPprof == "" {
		return nil
	}
	profiled, stopGets := context.WithCancel(ctx)
	go func() {
		for profiled.Err() == nil {
			_ = getDefault(ctx, pc.viaHub)
		}
	}()
	err := pb.hut.profile(ctx, *fleetPprof, 10*time.Second, true)
	stopGets()
	return err
}

// The LIST's objects: ConfigMaps of proxyListSize bytes in
// proxyListNamespace of the spoke.
const (
	proxyListObjects, proxyListSize = 2000, 4096
	proxyListNamespace              = "proxy-bench"
	proxyListRounds                 = 10
)

// timeLists times a LIST of proxyListObjects ConfigMaps through the hub
// against the same LIST straight to the spoke. The spoke gzips a large
// response for a client that accepts it (client-go does by default): 8.5
// MiB of JSON crosses the tunnel as about 0.1 MiB. So the LIST is timed
// both ways, each kind taking turns as the GETs do.
func (pb *proxyBench) timeLists(ctx context.Context, pc *proxyClients) error {
	if err := pb.fillSpoke(ctx); err != nil {
		return err
	}
	uncompressed := func(cfg *rest.Config) kubernetes.Interface {
		c := rest.CopyConfig(cfg)
		c.DisableCompression = true
		return kubernetes.NewForConfigOrDie(c)
	}
	lists := []struct {
		what string
		cs   kubernetes.Interface
	}{
		{"through the hub, gzip", pc.viaHub},
		{"straight to the spoke, gzip", pc.straight},
		{"through the hub, uncompressed", uncompressed(pc.through)},
		{"straight to the spoke, uncompressed", uncompressed(pc.direct)},
	}
	var listBytes int
	times, err := takeTurns(proxyListRounds, 0, len(lists), func(k int) error {
		raw, err := lists[k].cs.CoreV1().RESTClient().Get().Namespace(proxyListNamespace).Resource("configmaps").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("LIST %s: %w", lists[k].what, err)
		}
		listBytes = len(raw)
		return nil
	})
	if err != nil {
		return err
	}
	for k, l := range lists {
		p50 := percentile(times[k], 50)
		row(fmt.Sprintf("LIST of %d ConfigMaps (%.1f MiB) %s, p50 of %d", proxyListObjects, float64(listBytes)/(1<<20), l.what, proxyListRounds),
			fmt.Sprintf("%s (%.0f MiB/s)", msText(p50), float64(listBytes)/(1<<20)/p50.Seconds()), "")
	}
	return nil
}

// fillSpoke creates the LIST's namespace and ConfigMaps on the spoke.
func (pb *proxyBench) fillSpoke(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: proxyListNamespace}}
	if _, err := pb.spoke.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	payload := strings.Repeat("x", proxyListSize)
	for i := range proxyListObjects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"v": payload}}
		if _, err := pb.spoke.CoreV1().ConfigMaps(proxyListNamespace).Create(ctx, cm, metav1.CreateOptions{}); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return nil
}

// hubMemory is what the hub process holds: live heap after a GC, the
// goroutines' stacks and how many, and RSS.
type hubMemory struct {
	heap, stacks, rss int64
	goroutines        int
}

func readHubMemory(ctx context.Context, h *hubUnderTest) (hubMemory, error) {
	var m hubMemory
	var err error
	if m.heap, err = h.liveHeap(ctx); err != nil {
		return m, err
	}
	base, err := pprofBase(h.pprofDirs[0])
	if err != nil {
		return m, err
	}
	// The heap profile's debug=1 text ends with the runtime's MemStats.
	r, err := get(ctx, base+"heap?debug=1")
	if err != nil {
		return m, err
	}
	body, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return m, err
	}
	if _, after, ok := strings.Cut(string(body), "\n# Stack = "); ok {
		m.stacks, _ = strconv.ParseInt(strings.Fields(after)[0], 10, 64)
	}
	if r, err = get(ctx, base+"goroutine?debug=1"); err != nil {
		return m, err
	}
	body, err = io.ReadAll(r)
	r.Close()
	if err != nil {
		return m, err
	}
	if _, after, ok := strings.Cut(string(body), "goroutine profile: total "); ok {
		m.goroutines, _ = strconv.Atoi(strings.Fields(after)[0])
	}
	m.rss, err = h.rss()
	return m, err
}

func tunnelCounts(s string) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(f), "%d", &n); err != nil || n < 1 {
			return nil, fmt.Errorf("-proxy-tunnels %q: want positive numbers, e.g. 100,1000", s)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return counts, nil
}

// agentHubConfig is the hub configuration that the agent of cluster
// stored on the spoke (its client certificate).
func agentHubConfig(ctx context.Context, spoke kubernetes.Interface, cluster, hubURL string) (*rest.Config, error) {
	s, err := spoke.CoreV1().Secrets("agent-"+cluster).Get(ctx, agent.HubKubeconfigSecretName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the hub credentials of cluster %s: %w", cluster, err)
	}
	kc, err := clientcmd.Load(s.Data["kubeconfig"])
	if err != nil {
		return nil, err
	}
	var ca []byte
	for _, c := range kc.Clusters {
		ca = c.CertificateAuthorityData
	}
	return &rest.Config{Host: hubURL, TLSClientConfig: rest.TLSClientConfig{CAData: ca, CertData: s.Data["tls.crt"], KeyData: s.Data["tls.key"]}}, nil
}

// grantHubAdminsOn lets the hub's admins (flotilla:system:masters through
// the proxy) read the spoke, as flotilla dev up does.
func grantHubAdminsOn(ctx context.Context, spoke kubernetes.Interface) error {
	_, err := spoke.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla:bench-hub-admins"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "flotilla:system:masters"}},
	}, metav1.CreateOptions{})
	return client.IgnoreAlreadyExists(err)
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func msText(d time.Duration) string { return fmt.Sprintf("%.2f ms", ms(d)) }
